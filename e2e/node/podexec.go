package node

import (
	"fmt"
	"os/exec"
)

// PodCommand is argv run in the network namespace of a Pod the agent
// runs, as `kubectl exec` would run it in the Pod: its loopback is the
// Pod's, which is what loopback-only servers of the Pod answer.
func (a *Agent) PodCommand(namespace, pod string, argv ...string) (*exec.Cmd, error) {
	run := a.runOf(namespace + "/" + pod)
	if run == nil {
		return nil, fmt.Errorf("pod %s/%s is not running on node %s", namespace, pod, a.Node)
	}
	return run.host.Command(argv...), nil
}
