package node

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestConformanceImagesAndCommands: echo-advanced runs as its server and
// execs its client, both from $CONFORMANCE_IMAGES_DIR; a binary not built
// fails naming the image and the build script.
func TestConformanceImagesAndCommands(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("CONFORMANCE_IMAGES_DIR", dir)
	if _, err := ConformanceCommands(); err == nil || !strings.Contains(err.Error(), "command client of image registry.k8s.io/gateway-api/echo-advanced is not built (run hack/build-conformance-images.sh)") {
		t.Fatalf("no client built: %v", err)
	}
	for _, name := range []string{"echo-basic", "coredns", "echo-advanced", "echo-advanced-client"} {
		if err := os.WriteFile(filepath.Join(dir, name), nil, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	images, err := ConformanceImages()
	if err != nil {
		t.Fatal(err)
	}
	if bin, ok := images.Binary("registry.k8s.io/gateway-api/echo-advanced:v1.5.1"); !ok || bin != filepath.Join(dir, "echo-advanced") {
		t.Errorf("echo-advanced runs as %q (%v), want its server %s", bin, ok, filepath.Join(dir, "echo-advanced"))
	}
	commands, err := ConformanceCommands()
	if err != nil || len(commands) != 1 || commands[0] != (Command{Image: EchoAdvancedImage, Name: "client", Binary: filepath.Join(dir, "echo-advanced-client")}) {
		t.Errorf("commands %+v, %v; want echo-advanced's client", commands, err)
	}
	if err := os.Remove(filepath.Join(dir, "echo-advanced")); err != nil {
		t.Fatal(err)
	}
	if _, err := ConformanceImages(); err == nil || !strings.Contains(err.Error(), "image registry.k8s.io/gateway-api/echo-advanced is not built") {
		t.Errorf("no server built: %v", err)
	}
}
