package node

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// podRun is one Pod the agent runs: its namespace and one process per
// container, init containers first (lifecycle.go), each restarted when it
// exits (restartPolicy Always is what Deployments use).
type podRun struct {
	uid        types.UID
	host       *Host
	inits      []container // the spec's initContainers, in order
	containers []container
	logs       map[string]*containerLog // by container name
	life       *lifecycle
	reported   int // life's version last written to the Pod's status
	started    metav1.Time
	cancel     context.CancelFunc
	stopped    chan struct{}
}

// container is how one container of the Pod is run.
type container struct {
	name, image string
	argv, env   []string
	sidecar     bool // an init container with restartPolicy Always
}

// start runs every container of pod in a new namespace. A nil run with
// no error: the Pod cannot be run here, and its status says why.
func (a *Agent) start(ctx context.Context, pod *corev1.Pod) (*podRun, error) {
	specs := append(append([]corev1.Container{}, pod.Spec.InitContainers...), pod.Spec.Containers...)
	var containers []container
	for i, c := range specs {
		bin, ok := a.images.Binary(c.Image)
		if !ok {
			return nil, a.refuse(ctx, pod, "ImageNotKnown",
				fmt.Sprintf("container %s: image %s is not one the node agent can run (it runs %s)", c.Name, c.Image, a.images.Known()))
		}
		sidecar := i < len(pod.Spec.InitContainers) && c.RestartPolicy != nil && *c.RestartPolicy == corev1.ContainerRestartPolicyAlways
		containers = append(containers, container{name: c.Name, image: c.Image, argv: []string{bin}, sidecar: sidecar})
	}
	dir, err := a.volumeDir(pod)
	if err != nil {
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
	for i, c := range specs {
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

	key := pod.Namespace + "/" + pod.Name
	runCtx, cancel := context.WithCancel(context.Background())
	run := &podRun{uid: pod.UID, host: host, inits: containers[:len(pod.Spec.InitContainers)],
		containers: containers[len(pod.Spec.InitContainers):], logs: map[string]*containerLog{},
		life:    &lifecycle{runs: map[string]*containerRun{}, changed: func() { a.queue.Add(key) }},
		started: metav1.Now(), cancel: cancel, stopped: make(chan struct{})}
	for _, c := range containers {
		run.logs[c.name] = newContainerLog()
	}
	a.mu.Lock()
	a.running[key] = run
	delete(a.unrunnable, key)
	a.mu.Unlock()

	go func() {
		a.runContainers(runCtx, run, pod)
		<-runCtx.Done()
		a.net.Remove(host)
		close(run.stopped)
	}()
	return run, nil
}

// report writes the status of a running Pod when its containers have
// changed since the last write.
func (a *Agent) report(ctx context.Context, pod *corev1.Pod, run *podRun) error {
	run.life.mu.Lock()
	version := run.life.version
	run.life.mu.Unlock()
	if run.reported == version+1 && pod.Status.PodIP == run.host.IP {
		return nil
	}
	if err := a.writeStatus(ctx, pod, a.podStatus(pod, run)); err != nil {
		return err
	}
	run.reported = version + 1 // zero: never written
	return nil
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
