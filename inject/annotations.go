package inject

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/tlsplane/tlsplane/capture"
	"github.com/tlsplane/tlsplane/translator/mesh"
)

// The Pod annotations injection reads. AnnotationMesh is the namespace
// label's key (mesh.Label), so one word means "the mesh" on both.
const (
	// AnnotationMesh: Disabled keeps a Pod of a namespace in the mesh
	// out of it; mesh.Enabled (or no annotation) lets it in.
	AnnotationMesh = mesh.Label
	Disabled       = "disabled"
	// AnnotationExcludePorts lists destination TCP ports the capture
	// never redirects ("5432,6379"): traffic the sidecar must not see.
	AnnotationExcludePorts = "tlsplane.io/mesh-exclude-ports"
)

// optedOut reads AnnotationMesh; a value other than the two is refused
// rather than guessed, so a typo ("disable") cannot inject silently.
func optedOut(pod *corev1.Pod) (bool, error) {
	v, ok := pod.Annotations[AnnotationMesh]
	switch {
	case !ok || v == mesh.Enabled:
		return false, nil
	case v == Disabled:
		return true, nil
	}
	return false, fmt.Errorf("annotation %s: %q: want %s or %s", AnnotationMesh, v, Disabled, mesh.Enabled)
}

// excludedPorts reads AnnotationExcludePorts as tlsplane capture
// --exclude-ports takes it, checked as the capture will check it, so a
// bad value is refused at admission instead of failing the init step.
func excludedPorts(pod *corev1.Pod, c Config) ([]uint16, error) {
	v := pod.Annotations[AnnotationExcludePorts]
	var ports []uint16
	for _, p := range strings.Split(v, ",") {
		if p = strings.TrimSpace(p); p == "" {
			continue
		}
		n, err := strconv.ParseUint(p, 10, 16)
		if err != nil || n == 0 {
			return nil, fmt.Errorf("annotation %s: %q is not a TCP port", AnnotationExcludePorts, p)
		}
		ports = append(ports, uint16(n))
	}
	if _, err := capture.Describe(capture.Config{SidecarUID: uint32(c.SidecarUID), Port: uint16(c.CapturePort), ExcludePorts: ports}); err != nil {
		return nil, fmt.Errorf("annotation %s: %q: %w", AnnotationExcludePorts, v, err)
	}
	slices.Sort(ports)
	return ports, nil
}

func joinPorts(ports []uint16) string {
	s := make([]string, len(ports))
	for i, p := range ports {
		s[i] = strconv.Itoa(int(p))
	}
	return strings.Join(s, ",")
}
