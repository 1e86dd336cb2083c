package apiserver

import (
	"context"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
)

var crdResource = schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}

// GatewayAPIChannel is the release channel whose CRDs the API server gets:
// GATEWAY_API_CHANNEL, standard when unset.
func GatewayAPIChannel() (string, error) {
	switch c := os.Getenv("GATEWAY_API_CHANNEL"); c {
	case "", "standard":
		return "standard", nil
	case "experimental":
		return c, nil
	default:
		return "", fmt.Errorf("GATEWAY_API_CHANNEL=%q: want standard or experimental", c)
	}
}

// GatewayAPICRDDir is config/crd/<channel> of the sigs.k8s.io/gateway-api
// module this module builds against, so the CRDs match the Go types.
func GatewayAPICRDDir() (string, error) {
	if dir := os.Getenv("GATEWAY_API_CRD_DIR"); dir != "" {
		return dir, nil
	}
	channel, err := GatewayAPIChannel()
	if err != nil {
		return "", err
	}
	return crdDirOf(channel)
}

// crdDirOf is config/crd/<channel> of the sigs.k8s.io/gateway-api module.
func crdDirOf(channel string) (string, error) {
	moduleDir, err := GatewayAPIModuleDir()
	if err != nil {
		return "", err
	}
	return filepath.Join(moduleDir, "config", "crd", channel), nil
}

// GatewayAPIModuleDir is the directory of the sigs.k8s.io/gateway-api
// module this module builds against (its CRDs, examples and invalid
// examples are read from there).
func GatewayAPIModuleDir() (string, error) {
	_, file, _, _ := runtime.Caller(0)
	cmd := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", "sigs.k8s.io/gateway-api")
	cmd.Dir = filepath.Join(filepath.Dir(file), "..")
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("locate module sigs.k8s.io/gateway-api: %w", err)
	}
	moduleDir := strings.TrimSpace(string(out))
	if moduleDir == "" {
		return "", fmt.Errorf("module sigs.k8s.io/gateway-api is not downloaded (go mod download sigs.k8s.io/gateway-api)")
	}
	return moduleDir, nil
}

// RequiredCRDs are the CRDs tlsplane reads; every channel must
// hold each of them, or InstallGatewayAPICRDs fails naming the missing one.
var RequiredCRDs = []string{
	"backendtlspolicies.gateway.networking.k8s.io",
	"gatewayclasses.gateway.networking.k8s.io",
	"gateways.gateway.networking.k8s.io",
	"httproutes.gateway.networking.k8s.io",
	"grpcroutes.gateway.networking.k8s.io",
	"tlsroutes.gateway.networking.k8s.io",
	"tcproutes.gateway.networking.k8s.io",
	"udproutes.gateway.networking.k8s.io",
	"referencegrants.gateway.networking.k8s.io",
}

// InstallGatewayAPICRDs applies every manifest of the channel's directory
// (not its kustomization.yaml, which is no API object) and waits until
// each CRD is Established.
func InstallGatewayAPICRDs(ctx context.Context, cfg *rest.Config) error {
	dir, err := GatewayAPICRDDir()
	if err != nil {
		return err
	}
	return installCRDDir(ctx, cfg, dir)
}

// installCRDDir is InstallGatewayAPICRDs for the CRDs of dir.
func installCRDDir(ctx context.Context, cfg *rest.Config, dir string) error {
	files, err := filepath.Glob(filepath.Join(dir, "*.yaml"))
	if err != nil || len(files) == 0 {
		return fmt.Errorf("no Gateway API CRDs in %s (%v)", dir, err)
	}
	files = slices.DeleteFunc(files, func(f string) bool { return filepath.Base(f) == "kustomization.yaml" })
	sort.Strings(files)
	var crds []string
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			return err
		}
		applied, err := Apply(ctx, cfg, data, false)
		if err != nil {
			return fmt.Errorf("%s: %w", filepath.Base(f), err)
		}
		for _, obj := range applied {
			if obj.GetKind() == "CustomResourceDefinition" {
				crds = append(crds, obj.GetName())
			}
		}
	}
	for _, want := range RequiredCRDs {
		if !slices.Contains(crds, want) {
			return fmt.Errorf("CustomResourceDefinition %s is not in %s", want, dir)
		}
	}
	return waitEstablished(ctx, cfg, crds, 60*time.Second)
}

// XBackendCRDs are the experimental external backends' CRDs (GEP-4894,
// gateway.networking.x-k8s.io), by file of config/crd/experimental.
var XBackendCRDs = map[string]string{
	"xbackends.gateway.networking.x-k8s.io":               "gateway.networking.x-k8s.io_xbackends.yaml",
	"xbackendtrafficpolicies.gateway.networking.x-k8s.io": "gateway.networking.x-k8s.io_xbackendtrafficpolicies.yaml",
}

// InstallXBackendCRDs applies XBackendCRDs from the module's experimental
// channel, whatever GATEWAY_API_CHANNEL says (the standard channel has
// none), and waits until they are Established. tlsplane reads them when
// served; a test that wants them absent deletes them. Start does not call
// it: the conformance suite refuses CRDs of two channels.
func InstallXBackendCRDs(ctx context.Context, cfg *rest.Config) error {
	return installExperimental(ctx, cfg, XBackendCRDs)
}

// XMeshCRDs are the experimental, cluster-scoped XMesh's CRD (GEP-3949),
// by file of config/crd/experimental.
var XMeshCRDs = map[string]string{
	"xmeshes.gateway.networking.x-k8s.io": "gateway.networking.x-k8s.io_xmeshes.yaml",
}

// InstallXMeshCRDs applies XMeshCRDs from the module's experimental
// channel and waits until they are Established. Neither Start nor
// e2e/kube's setup calls it: a test that wants XMeshes installs them
// (tlsplane watches them when served, from its start).
func InstallXMeshCRDs(ctx context.Context, cfg *rest.Config) error {
	return installExperimental(ctx, cfg, XMeshCRDs)
}

// installExperimental applies crds (name: file) from the module's
// experimental channel and waits until they are Established.
func installExperimental(ctx context.Context, cfg *rest.Config, crds map[string]string) error {
	dir, err := crdDirOf("experimental")
	if err != nil {
		return err
	}
	names := slices.Sorted(maps.Keys(crds))
	for _, name := range names {
		file := crds[name]
		data, err := os.ReadFile(filepath.Join(dir, file))
		if err != nil {
			return fmt.Errorf("CustomResourceDefinition %s: %w", name, err)
		}
		if _, err := Apply(ctx, cfg, data, false); err != nil {
			return fmt.Errorf("%s: %w", file, err)
		}
	}
	return waitEstablished(ctx, cfg, names, 60*time.Second)
}

func waitEstablished(ctx context.Context, cfg *rest.Config, names []string, timeout time.Duration) error {
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return err
	}
	deadline := time.Now().Add(timeout)
	for _, name := range names {
		for {
			obj, err := dyn.Resource(crdResource).Get(ctx, name, metav1.GetOptions{})
			if err == nil && established(obj) {
				break
			}
			if time.Now().After(deadline) {
				return fmt.Errorf("CustomResourceDefinition %s not Established after %s (last error: %v)", name, timeout, err)
			}
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-time.After(100 * time.Millisecond):
			}
		}
	}
	return nil
}

func established(crd *unstructured.Unstructured) bool {
	conds, _, _ := unstructured.NestedSlice(crd.Object, "status", "conditions")
	for _, c := range conds {
		m, ok := c.(map[string]any)
		if ok && m["type"] == "Established" && m["status"] == "True" {
			return true
		}
	}
	return false
}
