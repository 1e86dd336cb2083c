package main

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
)

// choosePod picks the Pod status asks: the Lease holder when it is Ready
// (its statuses are the ones written), else the oldest Running and Ready
// Pod; why says which rule chose it, in a line. The errors name the
// selector and namespace, and why each Pod found does not qualify.
func choosePod(pods []corev1.Pod, selector, ns, leader string) (*corev1.Pod, string, error) {
	if len(pods) == 0 {
		return nil, "", fmt.Errorf("no Pod matches selector %q in namespace %s: is tlsplane installed there? (-n NAMESPACE, --context, --selector pick another)", selector, ns)
	}
	var ready []*corev1.Pod
	var notReady []string
	for i := range pods {
		p := &pods[i]
		if reason := notReadyReason(p); reason != "" {
			notReady = append(notReady, p.Name+" ("+reason+")")
			continue
		}
		ready = append(ready, p)
	}
	if len(ready) == 0 {
		slices.Sort(notReady)
		return nil, "", fmt.Errorf("no Pod matching selector %q in namespace %s is Running and Ready: %s", selector, ns, strings.Join(notReady, ", "))
	}
	of := ""
	if len(pods) > 1 {
		of = fmt.Sprintf(" (%d of %d Pods Ready)", len(ready), len(pods))
	}
	for _, p := range ready {
		if leader != "" && p.Name == leader {
			return p, "Running and Ready, holds Lease " + ns + "/" + statusLease + " (the replica writing statuses)" + of, nil
		}
	}
	slices.SortFunc(ready, func(a, b *corev1.Pod) int {
		if c := a.CreationTimestamp.Compare(b.CreationTimestamp.Time); c != 0 {
			return c
		}
		return strings.Compare(a.Name, b.Name)
	})
	if len(ready) == 1 {
		return ready[0], "Running and Ready" + of, nil
	}
	return ready[0], "the oldest Running and Ready" + of + "; no Ready Pod holds Lease " + ns + "/" + statusLease, nil
}

// notReadyReason is why p cannot be asked, "" when it can.
func notReadyReason(p *corev1.Pod) string {
	if p.DeletionTimestamp != nil {
		return "terminating"
	}
	if p.Status.Phase != corev1.PodRunning {
		phase := string(p.Status.Phase)
		if phase == "" {
			phase = "no phase yet"
		}
		for _, c := range p.Status.ContainerStatuses {
			if c.State.Waiting != nil && c.State.Waiting.Reason != "" {
				return phase + ": " + c.State.Waiting.Reason
			}
		}
		return phase
	}
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			if c.Status == corev1.ConditionTrue {
				return ""
			}
			if c.Reason != "" {
				return "Running, not Ready: " + c.Reason
			}
		}
	}
	return "Running, not Ready"
}

// adminPortOf is port as a number, or the number of the container port
// named port.
func adminPortOf(p *corev1.Pod, port string) (int32, error) {
	if n, err := strconv.Atoi(port); err == nil {
		if n < 1 || n > 65535 {
			return 0, fmt.Errorf("--admin-port %d: not a port (1-65535)", n)
		}
		return int32(n), nil
	}
	var names []string
	for _, c := range p.Spec.Containers {
		for _, cp := range c.Ports {
			if cp.Name == port {
				return cp.ContainerPort, nil
			}
			if cp.Name != "" {
				names = append(names, cp.Name)
			}
		}
	}
	has := "no named port"
	if len(names) > 0 {
		has = "ports " + strings.Join(names, ", ")
	}
	return 0, fmt.Errorf("Pod %s/%s has no container port named %q (it has %s): pass --admin-port NAME or NUMBER", p.Namespace, p.Name, port, has)
}
