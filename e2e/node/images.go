package node

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
)

// Images maps an image repository (no tag, no digest) to the binary that
// is its entrypoint: the node agent runs a container of that image as that
// binary, whatever the tag, with the container's args.
type Images map[string]string

// EchoAdvancedImage is the mesh manifests' echo image (Istio's echo app).
const EchoAdvancedImage = "registry.k8s.io/gateway-api/echo-advanced"

// ConformanceImages are the images of the Gateway API conformance suite's
// base and mesh manifests, as built by hack/build-conformance-images.sh
// into e2e/.cache/bin/images: echo-basic from the suite's own module,
// CoreDNS from its module, echo-advanced's server from e2e/echoserver.
func ConformanceImages() (Images, error) {
	dir := conformanceImagesDir()
	images := Images{
		"registry.k8s.io/gateway-api/echo-basic": filepath.Join(dir, "echo-basic"),
		"registry.k8s.io/coredns/coredns":        filepath.Join(dir, "coredns"),
		EchoAdvancedImage:                        filepath.Join(dir, "echo-advanced"),
	}
	for repo, bin := range images {
		if _, err := os.Stat(bin); err != nil {
			return nil, fmt.Errorf("the binary of image %s is not built (run hack/build-conformance-images.sh): %w", repo, err)
		}
	}
	return images, nil
}

// Command is one command `kubectl exec` may run in an image's containers
// (Agent.AllowCommand).
type Command struct{ Image, Name, Binary string }

// ConformanceCommands are the commands the suite execs in the conformance
// images' containers: echo-advanced's client (e2e/echoclient), which the
// mesh tests run in the echo Pods.
func ConformanceCommands() ([]Command, error) {
	commands := []Command{{Image: EchoAdvancedImage, Name: "client", Binary: filepath.Join(conformanceImagesDir(), "echo-advanced-client")}}
	for _, c := range commands {
		if _, err := os.Stat(c.Binary); err != nil {
			return nil, fmt.Errorf("the binary of command %s of image %s is not built (run hack/build-conformance-images.sh): %w", c.Name, c.Image, err)
		}
	}
	return commands, nil
}

// conformanceImagesDir is $CONFORMANCE_IMAGES_DIR, else e2e/.cache/bin/images.
func conformanceImagesDir() string {
	if dir := os.Getenv("CONFORMANCE_IMAGES_DIR"); dir != "" {
		return dir
	}
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", ".cache", "bin", "images")
}

// Binary is the entrypoint of image, false when the agent cannot run it.
func (im Images) Binary(image string) (string, bool) {
	bin, ok := im[repository(image)]
	return bin, ok
}

// Known lists the repositories, for messages.
func (im Images) Known() string {
	var names []string
	for repo := range im {
		names = append(names, repo)
	}
	sort.Strings(names)
	return strings.Join(names, ", ")
}

// repository is image without its digest and tag.
func repository(image string) string {
	if i := strings.Index(image, "@"); i >= 0 {
		image = image[:i]
	}
	if i := strings.LastIndex(image, ":"); i > strings.LastIndex(image, "/") {
		image = image[:i]
	}
	return image
}
