package node

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// volumes writes the pod's Secret, ConfigMap and emptyDir volumes under
// dir, one folder each, and returns each volume's folder by name. As a
// kubelet's, they can be read by the container's user whoever it is (a
// sidecar runs as UID 1337): folders 0755, files the volume's defaultMode
// (0644 unless set), an emptyDir 0777; dir and its parents up to the
// agent's volume root must be traversable (volumeRoot). The
// projected service-account token volume the API server adds is left out:
// nothing the agent runs talks to the API server.
func volumes(ctx context.Context, c kubernetes.Interface, pod *corev1.Pod, dir string) (map[string]string, error) {
	paths := map[string]string{}
	for _, v := range pod.Spec.Volumes {
		folder := filepath.Join(dir, "volumes", v.Name)
		var files map[string][]byte
		var items []corev1.KeyToPath
		dirMode, fileMode := os.FileMode(0o755), os.FileMode(0o644)
		switch {
		case v.Secret != nil:
			s, err := c.CoreV1().Secrets(pod.Namespace).Get(ctx, v.Secret.SecretName, metav1.GetOptions{})
			if err != nil {
				return nil, fmt.Errorf("volume %s: Secret %s/%s: %w", v.Name, pod.Namespace, v.Secret.SecretName, err)
			}
			files, items = s.Data, v.Secret.Items
			if m := v.Secret.DefaultMode; m != nil {
				fileMode = os.FileMode(*m) & os.ModePerm
			}
		case v.ConfigMap != nil:
			cm, err := c.CoreV1().ConfigMaps(pod.Namespace).Get(ctx, v.ConfigMap.Name, metav1.GetOptions{})
			if err != nil {
				return nil, fmt.Errorf("volume %s: ConfigMap %s/%s: %w", v.Name, pod.Namespace, v.ConfigMap.Name, err)
			}
			files = map[string][]byte{}
			for k, val := range cm.Data {
				files[k] = []byte(val)
			}
			for k, val := range cm.BinaryData {
				files[k] = val
			}
			items = v.ConfigMap.Items
			if m := v.ConfigMap.DefaultMode; m != nil {
				fileMode = os.FileMode(*m) & os.ModePerm
			}
		case v.EmptyDir != nil:
			// World-writable, as the kubelet makes an emptyDir.
			files, dirMode = map[string][]byte{}, os.ModePerm
		case v.Projected != nil && strings.HasPrefix(v.Name, "kube-api-access-"):
			continue
		default:
			return nil, fmt.Errorf("volume %s: only secret, configMap and emptyDir volumes are supported", v.Name)
		}
		if err := writeVolume(folder, files, items, dirMode, fileMode); err != nil {
			return nil, fmt.Errorf("volume %s: %w", v.Name, err)
		}
		paths[v.Name] = folder
	}
	return paths, nil
}

func writeVolume(folder string, files map[string][]byte, items []corev1.KeyToPath, dirMode, fileMode os.FileMode) error {
	if err := os.MkdirAll(folder, 0o755); err != nil {
		return err
	}
	// Chmod, not MkdirAll's mode: the umask would take 0777's write bits.
	if err := os.Chmod(folder, dirMode); err != nil {
		return err
	}
	if len(items) == 0 {
		for k := range files {
			items = append(items, corev1.KeyToPath{Key: k, Path: k})
		}
	}
	for _, it := range items {
		data, ok := files[it.Key]
		if !ok {
			return fmt.Errorf("key %q not found", it.Key)
		}
		path := filepath.Join(folder, filepath.Clean("/"+it.Path))
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return err
		}
		mode := fileMode
		if it.Mode != nil {
			mode = os.FileMode(*it.Mode) & os.ModePerm
		}
		if err := os.WriteFile(path, data, mode); err != nil {
			return err
		}
		if err := os.Chmod(path, mode); err != nil {
			return err
		}
	}
	return nil
}

// mounts maps each of the container's mount paths to the host folder the
// agent wrote its volume to.
type mounts map[string]string

func containerMounts(c corev1.Container, volumePaths map[string]string) (mounts, error) {
	m := mounts{}
	for _, vm := range c.VolumeMounts {
		folder, ok := volumePaths[vm.Name]
		if !ok {
			if strings.HasPrefix(vm.Name, "kube-api-access-") {
				continue
			}
			return nil, fmt.Errorf("container %s: volume mount %s has no volume", c.Name, vm.Name)
		}
		m[filepath.Clean(vm.MountPath)] = filepath.Join(folder, vm.SubPath)
	}
	return m, nil
}

// rewrite turns a path inside the container into the host's: the process
// runs in a network namespace of its own but on the host's file system, so
// a path under a mount (a certificate in env, a config file in args) is
// pointed at the agent's copy of the volume. Anything else is unchanged.
func (m mounts) rewrite(value string) string {
	var longest string
	for mp := range m {
		if (value == mp || strings.HasPrefix(value, mp+"/")) && len(mp) > len(longest) {
			longest = mp
		}
	}
	if longest == "" {
		return value
	}
	return m[longest] + strings.TrimPrefix(value, longest)
}

// environment is the container's env as the kubelet would set it
// (literal values, the downward API's fields, Secret and ConfigMap keys),
// paths rewritten, sorted for a stable command line.
func environment(ctx context.Context, c kubernetes.Interface, pod *corev1.Pod, ctr corev1.Container, podIP string, m mounts) ([]string, error) {
	env := map[string]string{"HOSTNAME": pod.Name}
	for _, e := range ctr.Env {
		value := e.Value
		if src := e.ValueFrom; src != nil {
			var err error
			if value, err = envFrom(ctx, c, pod, src, podIP); err != nil {
				return nil, fmt.Errorf("container %s: env %s: %w", ctr.Name, e.Name, err)
			}
		}
		env[e.Name] = m.rewrite(value)
	}
	out := make([]string, 0, len(env))
	for k, v := range env {
		out = append(out, k+"="+v)
	}
	sort.Strings(out)
	return out, nil
}

func envFrom(ctx context.Context, c kubernetes.Interface, pod *corev1.Pod, src *corev1.EnvVarSource, podIP string) (string, error) {
	switch {
	case src.FieldRef != nil:
		switch src.FieldRef.FieldPath {
		case "metadata.name":
			return pod.Name, nil
		case "metadata.namespace":
			return pod.Namespace, nil
		case "metadata.uid":
			return string(pod.UID), nil
		case "spec.nodeName":
			return pod.Spec.NodeName, nil
		case "spec.serviceAccountName":
			return pod.Spec.ServiceAccountName, nil
		case "status.podIP", "status.hostIP":
			return podIP, nil
		}
		return "", fmt.Errorf("fieldRef %s is not supported", src.FieldRef.FieldPath)
	case src.SecretKeyRef != nil:
		s, err := c.CoreV1().Secrets(pod.Namespace).Get(ctx, src.SecretKeyRef.Name, metav1.GetOptions{})
		if err != nil {
			return "", err
		}
		return string(s.Data[src.SecretKeyRef.Key]), nil
	case src.ConfigMapKeyRef != nil:
		cm, err := c.CoreV1().ConfigMaps(pod.Namespace).Get(ctx, src.ConfigMapKeyRef.Name, metav1.GetOptions{})
		if err != nil {
			return "", err
		}
		return cm.Data[src.ConfigMapKeyRef.Key], nil
	}
	return "", fmt.Errorf("only fieldRef, secretKeyRef and configMapKeyRef are supported")
}
