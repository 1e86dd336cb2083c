package node

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/tlsplane/tlsplane/e2e/harness"
)

// podRun is one Pod the agent runs: its namespace and one process per
// container, each restarted when it exits (restartPolicy Always is what
// Deployments use).
type podRun struct {
	uid        types.UID
	host       *Host
	containers []container
	logs       map[string]*containerLog // by container name
	started    metav1.Time
	cancel     context.CancelFunc
	stopped    chan struct{}
}

// container is how one container of the Pod is run.
type container struct {
	name, image string
	argv, env   []string
}

// start runs every container of pod in a new namespace. A nil run with
// no error: the Pod cannot be run here, and its status says why.
func (a *Agent) start(ctx context.Context, pod *corev1.Pod) (*podRun, error) {
	var containers []container
	for _, c := range pod.Spec.Containers {
		bin, ok := a.images.Binary(c.Image)
		if !ok {
			return nil, a.refuse(ctx, pod, "ImageNotKnown",
				fmt.Sprintf("container %s: image %s is not one the node agent can run (it runs %s)", c.Name, c.Image, a.images.Known()))
		}
		containers = append(containers, container{name: c.Name, image: c.Image, argv: []string{bin}})
	}
	dir := a.podDir(pod)
	if err := mkdir(dir); err != nil {
		return nil, err
	}
	volumePaths, err := volumes(ctx, a.client, pod, dir)
	if err != nil {
		// A Secret created right after the Deployment: try again, as the kubelet does.
		return nil, err
	}
	dns, err := podDNS(pod, a.clusterDNS, nodeDNS())
	if err != nil {
		return nil, a.refuse(ctx, pod, "CreatePodSandboxError", err.Error())
	}
	host, err := a.net.AddHost(fmt.Sprintf("%x", time.Now().UnixNano()&0xffffff))
	if err != nil {
		return nil, err
	}
	if err := a.sandbox(host, dns); err != nil {
		a.net.Remove(host)
		return nil, err
	}
	for i, c := range pod.Spec.Containers {
		m, err := containerMounts(c, volumePaths)
		if err == nil {
			containers[i].env, err = environment(ctx, a.client, pod, c, host.IP, m)
		}
		if err != nil {
			a.net.Remove(host)
			return nil, a.refuse(ctx, pod, "CreateContainerConfigError", err.Error())
		}
		for _, arg := range append(append([]string{}, c.Command...), c.Args...) {
			containers[i].argv = append(containers[i].argv, m.rewrite(expand(arg, containers[i].env)))
		}
		if len(c.Command) > 0 {
			// The image's entrypoint is replaced by command; our binary is
			// the entrypoint, so drop the command's own first word.
			containers[i].argv = append(containers[i].argv[:1], containers[i].argv[2:]...)
		}
		uid, gid := runAs(pod, c)
		containers[i].argv = asUser(containers[i].argv, uid, gid)
	}

	runCtx, cancel := context.WithCancel(context.Background())
	run := &podRun{uid: pod.UID, host: host, containers: containers, logs: map[string]*containerLog{},
		started: metav1.Now(), cancel: cancel, stopped: make(chan struct{})}
	for _, c := range containers {
		run.logs[c.name] = newContainerLog()
	}
	key := pod.Namespace + "/" + pod.Name
	a.mu.Lock()
	a.running[key] = run
	delete(a.unrunnable, key)
	a.mu.Unlock()

	done := make(chan struct{}, len(containers))
	for _, c := range containers {
		go func() {
			defer func() { done <- struct{}{} }()
			a.supervise(runCtx, host, logName(pod, c.name), c.argv, c.env, run.logs[c.name])
		}()
	}
	go func() {
		for range containers {
			<-done
		}
		a.net.Remove(host)
		close(run.stopped)
	}()
	return run, nil
}

// report writes the status of a running Pod, unless it already says so.
func (a *Agent) report(ctx context.Context, pod *corev1.Pod, run *podRun) error {
	if pod.Status.Phase == corev1.PodRunning && pod.Status.PodIP == run.host.IP && podReady(pod) {
		return nil
	}
	status := corev1.PodStatus{
		Phase:     corev1.PodRunning,
		HostIP:    a.net.Gateway,
		HostIPs:   []corev1.HostIP{{IP: a.net.Gateway}},
		PodIP:     run.host.IP,
		PodIPs:    []corev1.PodIP{{IP: run.host.IP}},
		StartTime: &run.started,
		QOSClass:  pod.Status.QOSClass, // the API server's, immutable
	}
	for _, t := range []corev1.PodConditionType{corev1.PodScheduled, corev1.PodInitialized, corev1.ContainersReady, corev1.PodReady} {
		status.Conditions = append(status.Conditions, corev1.PodCondition{Type: t, Status: corev1.ConditionTrue, LastTransitionTime: run.started})
	}
	for _, c := range run.containers {
		status.ContainerStatuses = append(status.ContainerStatuses, corev1.ContainerStatus{
			Name: c.name, Image: c.image, ImageID: c.image, Ready: true, Started: new(true),
			State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: run.started}},
		})
	}
	return a.writeStatus(ctx, pod, status)
}

func podReady(pod *corev1.Pod) bool {
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// supervise runs argv in host until ctx ends, restarting it (1 s, doubling
// to 10 s) when it exits on its own; its output goes to the log file and
// to log, which the kubelet endpoint serves.
func (a *Agent) supervise(ctx context.Context, host *Host, name string, argv, env []string, log *containerLog) {
	backoff := time.Second
	for {
		cmd := host.Command(argv...)
		cmd.Env = env
		cmd.Stdout, cmd.Stderr = log.writer(stdout), log.writer(stderr)
		p := harness.StartCmd(a.t, a.logDir, name, cmd)
		select {
		case <-ctx.Done():
			p.Stop(5 * time.Second)
			return
		case <-p.Done():
			a.t.Logf("node agent: %s exited; restarting in %s; log tail:\n%s", name, backoff, p.LogTail(10))
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(backoff):
		}
		backoff = min(2*backoff, 10*time.Second)
	}
}

// stop ends the Pod's processes and removes its namespace; uid, when not
// empty, must match.
func (a *Agent) stop(key string, uid types.UID) {
	a.mu.Lock()
	run := a.running[key]
	if run == nil || (uid != "" && run.uid != uid) {
		a.mu.Unlock()
		return
	}
	delete(a.running, key)
	a.mu.Unlock()
	run.cancel()
	<-run.stopped
}

// sandbox gives host what the Pod's namespace needs beyond its address:
// its resolv.conf (nil: the node's) and the route to the Services.
func (a *Agent) sandbox(host *Host, dns *dnsConf) error {
	if dns != nil {
		if err := host.SetResolvConf(dns.String()); err != nil {
			return err
		}
	}
	if a.serviceCIDR != "" {
		return a.net.AddRoute(host, a.serviceCIDR)
	}
	return nil
}
