package node

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// containerStatus is c's status as the kubelet writes it from the
// container's latest run: running, terminated (Completed for an exit 0,
// Error otherwise), or waiting (PodInitializing) when not started yet.
func containerStatus(c container, r *containerRun) corev1.ContainerStatus {
	s := corev1.ContainerStatus{Name: c.name, Image: c.image, ImageID: c.image, Started: new(false)}
	switch {
	case r == nil:
		s.State.Waiting = &corev1.ContainerStateWaiting{Reason: "PodInitializing"}
		return s
	case r.running:
		s.State.Running = &corev1.ContainerStateRunning{StartedAt: r.started}
		s.Ready, s.Started = true, new(true)
	case r.exited:
		reason := "Completed"
		if r.exitCode != 0 {
			reason = "Error"
		}
		s.State.Terminated = &corev1.ContainerStateTerminated{ExitCode: r.exitCode, Reason: reason, StartedAt: r.started, FinishedAt: r.finished}
	}
	s.RestartCount = r.restarts
	return s
}

// podStatus is the status of a Pod the agent runs: its init containers'
// and containers' statuses, Initialized once every init step is done,
// Ready once every container runs as well.
func (a *Agent) podStatus(pod *corev1.Pod, run *podRun) corev1.PodStatus {
	l := run.life
	l.mu.Lock()
	defer l.mu.Unlock()
	status := corev1.PodStatus{
		Phase:     corev1.PodPending,
		HostIP:    a.net.Gateway,
		HostIPs:   []corev1.HostIP{{IP: a.net.Gateway}},
		PodIP:     run.host.IP,
		PodIPs:    []corev1.PodIP{{IP: run.host.IP}},
		StartTime: &run.started,
		QOSClass:  pod.Status.QOSClass, // the API server's, immutable
	}
	for _, c := range run.inits {
		s := containerStatus(c, l.runs[c.name])
		if !c.sidecar {
			s.Ready = s.State.Terminated != nil && s.State.Terminated.ExitCode == 0
		}
		status.InitContainerStatuses = append(status.InitContainerStatuses, s)
	}
	ready := l.initialized != nil
	for _, c := range run.containers {
		s := containerStatus(c, l.runs[c.name])
		ready = ready && s.State.Running != nil
		status.ContainerStatuses = append(status.ContainerStatuses, s)
	}
	condition := func(t corev1.PodConditionType, ok bool, at metav1.Time, reason string) corev1.PodCondition {
		c := corev1.PodCondition{Type: t, Status: corev1.ConditionFalse, LastTransitionTime: at, Reason: reason}
		if ok {
			c.Status, c.Reason = corev1.ConditionTrue, ""
		}
		return c
	}
	initAt, initReason := run.started, "ContainersNotInitialized"
	if l.initialized != nil {
		initAt = *l.initialized
	}
	switch {
	case l.failed:
		status.Phase = corev1.PodFailed
		initReason = "InitContainerFailed"
	case l.initialized != nil:
		status.Phase = corev1.PodRunning
	}
	status.Conditions = []corev1.PodCondition{
		condition(corev1.PodScheduled, true, run.started, ""),
		condition(corev1.PodInitialized, l.initialized != nil, initAt, initReason),
		condition(corev1.ContainersReady, ready, initAt, "ContainersNotReady"),
		condition(corev1.PodReady, ready, initAt, "ContainersNotReady"),
	}
	return status
}
