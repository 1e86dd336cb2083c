package node

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"sync"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
)

// Agent plays the scheduler and the kubelet for one Node: it binds every
// unscheduled Pod to its Node and runs each container whose image it knows
// as a process in a network namespace holding the Pod's IP; a Pod is Ready
// once its processes run (none of the suite's Pods has a probe). A Pod it
// cannot run stays Pending with a waiting reason naming the image.
type Agent struct {
	Node   string
	client kubernetes.Interface
	net    *Network
	images Images
	logDir string
	t      testing.TB

	queue workqueue.TypedRateLimitingInterface[string]
	pods  cache.Indexer

	mu      sync.Mutex
	running map[string]*podRun // by namespace/name
	// Unrunnable records, per Pod, why the agent could not run it.
	unrunnable map[string]string
	// commands are what exec may run, by image repository and name (exec.go).
	commands map[string]map[string]string
	// clusterDNS and serviceCIDR are the AgentOptions' (agentoptions.go).
	clusterDNS, serviceCIDR string
	// volumeRoot holds the Pods' volumes (volumeroot.go).
	volumeRoot string
}

// StartAgent serves the kubelet endpoint with kubelet, registers the Node
// and starts the loop; it stops with ctx. Processes are started with t so
// the test's cleanup stops any left.
func StartAgent(ctx context.Context, t testing.TB, c kubernetes.Interface, n *Network, images Images, nodeName, logDir string, kubelet KubeletTLS, opts ...AgentOption) (*Agent, error) {
	a := &Agent{
		Node: nodeName, client: c, net: n, images: images, logDir: logDir, t: t,
		queue:      workqueue.NewTypedRateLimitingQueue(workqueue.DefaultTypedControllerRateLimiter[string]()),
		running:    map[string]*podRun{},
		unrunnable: map[string]string{},
		commands:   map[string]map[string]string{},
	}
	for _, o := range opts {
		o(a)
	}
	var err error
	if a.volumeRoot, err = newVolumeRoot(t); err != nil {
		return nil, err
	}
	port, err := a.serveKubelet(ctx, kubelet)
	if err != nil {
		return nil, err
	}
	if err := a.register(ctx, port); err != nil {
		return nil, err
	}
	factory := informers.NewSharedInformerFactory(c, 0)
	inf := factory.Core().V1().Pods().Informer()
	enqueue := func(obj any) {
		if key, err := cache.DeletionHandlingMetaNamespaceKeyFunc(obj); err == nil {
			a.queue.Add(key)
		}
	}
	if _, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: enqueue, UpdateFunc: func(_, obj any) { enqueue(obj) }, DeleteFunc: enqueue,
	}); err != nil {
		return nil, err
	}
	a.pods = inf.GetIndexer()
	factory.Start(ctx.Done())
	go func() { <-ctx.Done(); a.queue.ShutDown() }()
	// Two workers: a slow start of one Pod must not hold up the others.
	for range 2 {
		go a.work(ctx)
	}
	return a, nil
}

// register creates the Node, Ready, with room for every Pod the suite
// runs, its kubelet endpoint at kubeletPort on its InternalIP.
func (a *Agent) register(ctx context.Context, kubeletPort int32) error {
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: a.Node, Labels: map[string]string{"kubernetes.io/hostname": a.Node}}}
	created, err := a.client.CoreV1().Nodes().Create(ctx, node, metav1.CreateOptions{})
	if err != nil {
		return fmt.Errorf("register Node %s: %w", a.Node, err)
	}
	capacity := corev1.ResourceList{
		corev1.ResourceCPU:    resource.MustParse("64"),
		corev1.ResourceMemory: resource.MustParse("64Gi"),
		corev1.ResourcePods:   resource.MustParse("500"),
	}
	now := metav1.Now()
	created.Status = corev1.NodeStatus{
		Capacity: capacity, Allocatable: capacity,
		Conditions: []corev1.NodeCondition{{
			Type: corev1.NodeReady, Status: corev1.ConditionTrue, Reason: "NodeAgentReady",
			Message: "the e2e node agent runs Pods as processes", LastHeartbeatTime: now, LastTransitionTime: now,
		}},
		Addresses:       []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: a.net.Gateway}, {Type: corev1.NodeHostName, Address: a.Node}},
		DaemonEndpoints: corev1.NodeDaemonEndpoints{KubeletEndpoint: corev1.DaemonEndpoint{Port: kubeletPort}},
	}
	_, err = a.client.CoreV1().Nodes().UpdateStatus(ctx, created, metav1.UpdateOptions{})
	return err
}

func (a *Agent) work(ctx context.Context) {
	for {
		key, quit := a.queue.Get()
		if quit {
			return
		}
		if err := a.sync(ctx, key); err != nil && ctx.Err() == nil {
			a.t.Logf("node agent: Pod %s: %v (retrying)", key, err)
			a.queue.AddRateLimited(key)
		} else {
			a.queue.Forget(key)
		}
		a.queue.Done(key)
	}
}

// sync brings one Pod to where its spec says it should be.
func (a *Agent) sync(ctx context.Context, key string) error {
	obj, exists, err := a.pods.GetByKey(key)
	if err != nil {
		return err
	}
	if !exists {
		a.stop(key, "")
		return nil
	}
	pod := obj.(*corev1.Pod)
	switch {
	case pod.Spec.NodeName == "":
		return a.bind(ctx, pod)
	case pod.Spec.NodeName != a.Node:
		return nil
	case pod.DeletionTimestamp != nil:
		a.stop(key, "")
		// The kubelet's last word: the Pod's processes are gone.
		err := a.client.CoreV1().Pods(pod.Namespace).Delete(ctx, pod.Name, metav1.DeleteOptions{
			GracePeriodSeconds: new(int64), Preconditions: &metav1.Preconditions{UID: &pod.UID},
		})
		if apierrors.IsNotFound(err) || apierrors.IsConflict(err) {
			return nil
		}
		return err
	}
	a.mu.Lock()
	run := a.running[key]
	a.mu.Unlock()
	if run == nil || run.uid != pod.UID {
		a.stop(key, "") // an older Pod of the same name
		if run, err = a.start(ctx, pod); run == nil || err != nil {
			return err
		}
	}
	return a.report(ctx, pod, run)
}

func (a *Agent) bind(ctx context.Context, pod *corev1.Pod) error {
	err := a.client.CoreV1().Pods(pod.Namespace).Bind(ctx, &corev1.Binding{
		ObjectMeta: metav1.ObjectMeta{Name: pod.Name, Namespace: pod.Namespace, UID: pod.UID},
		Target:     corev1.ObjectReference{Kind: "Node", Name: a.Node},
	}, metav1.CreateOptions{})
	if apierrors.IsNotFound(err) || apierrors.IsConflict(err) {
		return nil
	}
	return err
}

// Unrunnable is a sorted list of "namespace/pod: why" for every Pod the
// agent could not run.
func (a *Agent) Unrunnable() []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	var out []string
	for k, why := range a.unrunnable {
		out = append(out, k+": "+why)
	}
	sort.Strings(out)
	return out
}

// refuse leaves pod Pending with why as every container's waiting reason.
func (a *Agent) refuse(ctx context.Context, pod *corev1.Pod, reason, why string) error {
	a.mu.Lock()
	a.unrunnable[pod.Namespace+"/"+pod.Name] = why
	a.mu.Unlock()
	a.t.Logf("node agent: Pod %s/%s not run: %s", pod.Namespace, pod.Name, why)
	status := pod.Status.DeepCopy()
	if status.Phase == corev1.PodPending && len(status.ContainerStatuses) > 0 && status.ContainerStatuses[0].State.Waiting != nil &&
		status.ContainerStatuses[0].State.Waiting.Message == why {
		return nil
	}
	status.Phase = corev1.PodPending
	status.ContainerStatuses = nil
	for _, c := range pod.Spec.Containers {
		status.ContainerStatuses = append(status.ContainerStatuses, corev1.ContainerStatus{
			Name: c.Name, Image: c.Image,
			State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: reason, Message: why}},
		})
	}
	return a.writeStatus(ctx, pod, *status)
}

// writeStatus replaces the Pod's status, retrying on a stale copy.
func (a *Agent) writeStatus(ctx context.Context, pod *corev1.Pod, status corev1.PodStatus) error {
	for attempt := 0; ; attempt++ {
		p := pod.DeepCopy()
		p.Status = status
		_, err := a.client.CoreV1().Pods(pod.Namespace).UpdateStatus(ctx, p, metav1.UpdateOptions{})
		if err == nil || apierrors.IsNotFound(err) || !apierrors.IsConflict(err) || attempt == 5 {
			if apierrors.IsNotFound(err) {
				return nil
			}
			return err
		}
		fresh, gerr := a.client.CoreV1().Pods(pod.Namespace).Get(ctx, pod.Name, metav1.GetOptions{})
		if gerr != nil {
			return gerr
		}
		if fresh.UID != pod.UID {
			return nil
		}
		pod = fresh
	}
}

// logName is a file name for a Pod's container log.
func logName(pod *corev1.Pod, container string) string {
	return strings.Join([]string{pod.Namespace, pod.Name, container}, "_")
}
