package apiserver

import (
	"fmt"
	"path/filepath"
	"strings"
	"time"
)

// ClusterControllers are the kube-controller-manager controllers a cluster
// without a kubelet still needs to turn Deployments into Pods and Pods
// into EndpointSlices, to give each namespace its default ServiceAccount
// (Pod admission requires it) and to clean up after deletions. The node
// lifecycle controller is left out: no kubelet renews a Node's lease here.
var ClusterControllers = []string{
	"deployment-controller",
	"replicaset-controller",
	"endpointslice-controller",
	"serviceaccount-controller",
	"namespace-controller",
	"garbage-collector-controller",
}

// ControllerManager is a running kube-controller-manager.
type ControllerManager struct{ p *process }

// StartControllerManager runs kube-controller-manager (built beside
// kube-apiserver) against s with the admin kubeconfig and the given
// controllers. It serves nothing (--secure-port 0) and never elects.
func (s *Server) StartControllerManager(controllers []string) (*ControllerManager, error) {
	bin := filepath.Join(BinDir(), "kube-controller-manager")
	p, err := startProcess("kube-controller-manager", bin, filepath.Join(s.Dir, "kube-controller-manager.log"),
		"--kubeconfig", s.Kubeconfig,
		"--controllers", strings.Join(controllers, ","),
		"--leader-elect=false",
		"--secure-port=0",
		"--use-service-account-credentials=false",
		"--concurrent-deployment-syncs=10",
		"--concurrent-replicaset-syncs=10",
		"--concurrent-service-endpoint-syncs=10",
	)
	if err != nil {
		return nil, err
	}
	// A flag it refuses ends it at once: say so now rather than as Pods
	// that never appear.
	select {
	case <-p.done:
		return nil, fmt.Errorf("kube-controller-manager exited at start (%v); log tail:\n%s", p.err, p.tail())
	case <-time.After(2 * time.Second):
	}
	return &ControllerManager{p: p}, nil
}

// Stop ends it (SIGTERM, then SIGKILL after 10 s).
func (c *ControllerManager) Stop() { c.p.stop(10 * time.Second) }

// LogTail is the end of its log, for failure messages.
func (c *ControllerManager) LogTail() string { return c.p.tail() }
