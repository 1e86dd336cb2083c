package node

import (
	"fmt"
	"os"
	"path/filepath"

	corev1 "k8s.io/api/core/v1"
)

// volumeRoot is where the agent writes the Pods' volumes: a folder of its
// own under the temporary directory, traversable (0711) by every user, so
// a container that runs as another user than root (the mesh sidecar, UID
// 1337) reaches its volumes; the log directory may sit under a folder only
// root can enter. It is removed when the test ends.
func newVolumeRoot(t interface{ Cleanup(func()) }) (string, error) {
	dir, err := os.MkdirTemp("", "node-agent-volumes-")
	if err != nil {
		return "", fmt.Errorf("node agent: volume root: %w", err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	return dir, os.Chmod(dir, 0o711)
}

// volumeDir is the folder of pod's volumes under the volume root,
// traversable by every user and listable by none but root.
func (a *Agent) volumeDir(pod *corev1.Pod) (string, error) {
	dir := filepath.Join(a.volumeRoot, pod.Namespace+"_"+pod.Name+"_"+string(pod.UID))
	if err := os.MkdirAll(dir, 0o711); err != nil {
		return "", err
	}
	return dir, os.Chmod(dir, 0o711)
}
