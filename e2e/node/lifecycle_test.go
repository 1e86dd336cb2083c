package node

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// An injected mesh Pod's order, as the kubelet runs it: a regular init
// container runs to completion (a failure restarts it with backoff), a
// native sidecar is started and stays running before the next init step,
// and the main container starts only then; the status says so at every
// step (Initialized False until the init steps are done). Needs root and
// iproute2 (the Pod's namespace is real).
func TestInitContainersRunInOrderBeforeTheContainers(t *testing.T) {
	n := testNetwork(t, "containers run in a network namespace", "pgrep")
	h, err := n.AddHost("init")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	order, once := filepath.Join(dir, "order"), filepath.Join(dir, "failed-once")
	sh := func(script string) []string { return []string{"/bin/sh", "-c", script} }
	run := &podRun{uid: "uid-a", host: h, started: metav1.Now(), logs: map[string]*containerLog{},
		inits: []container{
			// Fails once, then completes: restarted with backoff.
			{name: "capture", image: "tlsplane", argv: sh("if [ ! -e " + once + " ]; then touch " + once + "; echo capture-failed >> " + order + "; exit 3; fi; echo capture >> " + order)},
			{name: "sidecar", image: "envoy", sidecar: true, argv: sh("echo sidecar >> " + order + "; exec sleep 600")},
			// The sidecar must still run when the next step starts.
			{name: "bootstrap", image: "tlsplane", argv: sh("pgrep -f 'sleep 600' >/dev/null && echo bootstrap-saw-sidecar >> " + order)},
		},
		containers: []container{{name: "app", image: "echo", argv: sh("echo app >> " + order + "; exec sleep 600")}},
	}
	for _, c := range append(append([]container{}, run.inits...), run.containers...) {
		run.logs[c.name] = newContainerLog()
	}
	a := &Agent{Node: "init-node", net: n, t: t, logDir: dir, running: map[string]*podRun{}}
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "pod-a"}}
	var mu sync.Mutex
	var statuses []corev1.PodStatus
	run.life = &lifecycle{runs: map[string]*containerRun{}, changed: func() {
		s := a.podStatus(pod, run)
		mu.Lock()
		statuses = append(statuses, s)
		mu.Unlock()
	}}
	ctx, cancel := context.WithCancel(context.Background())
	stopped := make(chan struct{})
	go func() { a.runContainers(ctx, run, pod); close(stopped) }()
	t.Cleanup(func() { cancel(); <-stopped })

	deadline := time.Now().Add(20 * time.Second)
	want := "capture-failed\ncapture\nsidecar\nbootstrap-saw-sidecar\napp\n"
	for {
		b, _ := os.ReadFile(order)
		if string(b) == want {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("order of the containers' runs:\n%s\nwant:\n%s", b, want)
		}
		time.Sleep(50 * time.Millisecond)
	}
	// The app's start is reported once it has run.
	for time.Now().Before(deadline) {
		if s := a.podStatus(pod, run); s.ContainerStatuses[0].State.Running != nil {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}

	mu.Lock()
	defer mu.Unlock()
	sawFailure := false
	for _, s := range statuses {
		initialized := condition(s, corev1.PodInitialized)
		if s.ContainerStatuses[0].State.Running != nil && initialized != corev1.ConditionTrue {
			t.Errorf("the app runs while Initialized is %s: %+v", initialized, s)
		}
		if term := s.InitContainerStatuses[0].State.Terminated; term != nil && term.ExitCode == 3 {
			sawFailure = sawFailure || (term.Reason == "Error" && initialized == corev1.ConditionFalse && s.Phase == corev1.PodPending)
		}
	}
	if !sawFailure {
		t.Errorf("no status showed capture's failure (exit code 3, Error) with Initialized False: %+v", statuses)
	}
	final := a.podStatus(pod, run)
	if final.Phase != corev1.PodRunning || condition(final, corev1.PodInitialized) != corev1.ConditionTrue || condition(final, corev1.PodReady) != corev1.ConditionTrue {
		t.Errorf("final status: phase %s, conditions %+v; want Running, Initialized and Ready", final.Phase, final.Conditions)
	}
	var got []string
	for _, s := range final.InitContainerStatuses {
		switch st := s.State; {
		case st.Terminated != nil:
			got = append(got, s.Name+" terminated "+st.Terminated.Reason+" "+itoa(st.Terminated.ExitCode)+" restarts "+itoa(s.RestartCount))
		case st.Running != nil:
			got = append(got, s.Name+" running restarts "+itoa(s.RestartCount))
		default:
			got = append(got, s.Name+" waiting")
		}
	}
	if w := "capture terminated Completed 0 restarts 1; sidecar running restarts 0; bootstrap terminated Completed 0 restarts 0"; strings.Join(got, "; ") != w {
		t.Errorf("initContainerStatuses: %s\nwant: %s", strings.Join(got, "; "), w)
	}
}

func condition(s corev1.PodStatus, t corev1.PodConditionType) corev1.ConditionStatus {
	for _, c := range s.Conditions {
		if c.Type == t {
			return c.Status
		}
	}
	return ""
}

func itoa(n int32) string { return strconv.Itoa(int(n)) }
