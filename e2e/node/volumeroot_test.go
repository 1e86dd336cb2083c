package node

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/tlsplane/tlsplane/e2e/harness"
)

// A container running as another user than root (the mesh sidecar, UID
// 1337) reads its Secret and ConfigMap volumes and writes its emptyDir,
// as under a kubelet; the agent writes them as root. Needs root and
// setpriv.
func TestVolumesAreReadableByTheContainersUser(t *testing.T) {
	if os.Geteuid() != 0 {
		harness.Prerequisite(t, "files are written as root", errors.New("not root"))
	}
	_, err := exec.LookPath("setpriv")
	harness.Prerequisite(t, "a command runs as UID 1337", err)
	root, err := newVolumeRoot(t)
	if err != nil {
		t.Fatal(err)
	}
	client := fake.NewClientset(
		&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "certs"}, Data: map[string][]byte{"tls.crt": []byte("cert")}},
		&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "conf"}, Data: map[string]string{"envoy.yaml": "admin: {}"}},
	)
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "pod-a", UID: "uid-a"}, Spec: corev1.PodSpec{Volumes: []corev1.Volume{
		{Name: "certs", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: "certs"}}},
		{Name: "conf", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: "conf"}}}},
		{Name: "tlsplane-mesh", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}},
	}}}
	a := &Agent{volumeRoot: root}
	dir, err := a.volumeDir(pod)
	if err != nil {
		t.Fatal(err)
	}
	paths, err := volumes(context.Background(), client, pod, dir)
	if err != nil {
		t.Fatal(err)
	}
	// What the bootstrap init container (root) leaves for the sidecar.
	bootstrap := filepath.Join(paths["tlsplane-mesh"], "bootstrap.json")
	if err := os.WriteFile(bootstrap, []byte("{}"), 0o644); err != nil {
		t.Fatal(err)
	}
	as1337 := func(args ...string) error {
		out, err := exec.Command("setpriv", append([]string{"--reuid=1337", "--regid=1337", "--clear-groups", "--"}, args...)...).CombinedOutput()
		if err != nil {
			return errors.New(string(out) + err.Error())
		}
		return nil
	}
	for _, f := range []string{filepath.Join(paths["certs"], "tls.crt"), filepath.Join(paths["conf"], "envoy.yaml"), bootstrap} {
		if err := as1337("cat", f); err != nil {
			t.Errorf("UID 1337 cannot read %s: %v", f, err)
		}
	}
	if err := as1337("touch", filepath.Join(paths["tlsplane-mesh"], "envoy.sock")); err != nil {
		t.Errorf("UID 1337 cannot write its emptyDir: %v", err)
	}
	if err := as1337("touch", filepath.Join(paths["certs"], "new")); err == nil {
		t.Errorf("UID 1337 writes into a Secret volume")
	}
}
