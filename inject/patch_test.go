package inject

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	jsonpatch "gopkg.in/evanphx/json-patch.v4"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/tlsplane/tlsplane/translator/mesh"
)

var testConfig = Config{SidecarImage: "envoy:test", TLSPlaneImage: "tlsplane:test", XDSAddress: "tlsplane-xds.tlsplane-system.svc:18000",
	SidecarUID: 1337, CapturePort: 15001, AdminPort: 15000}

func namespace(name string, labels map[string]string) *corev1.Namespace {
	return &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels}}
}

var (
	inMesh  = namespace("shop", map[string]string{mesh.Label: mesh.Enabled})
	outside = namespace("ops", map[string]string{"team": "ops"})
)

// podJSON is a Pod as the API server sends it, with a field no corev1
// type of this build knows (futureField), which the patch must keep.
func podJSON(annotations map[string]string, initContainers ...string) []byte {
	pod := map[string]any{
		"apiVersion": "v1", "kind": "Pod",
		"metadata": map[string]any{"name": "web", "namespace": "shop"},
		"spec": map[string]any{
			"serviceAccountName": "web",
			"containers":         []any{map[string]any{"name": "app", "image": "app:1"}},
		},
	}
	if annotations != nil {
		pod["metadata"].(map[string]any)["annotations"] = annotations
	}
	spec := pod["spec"].(map[string]any)
	if len(initContainers) > 0 {
		var list []any
		for _, name := range initContainers {
			list = append(list, map[string]any{"name": name, "image": "init:1", "futureField": name})
		}
		spec["initContainers"] = list
		spec["volumes"] = []any{map[string]any{"name": "data", "emptyDir": map[string]any{}}}
	}
	b, _ := json.Marshal(pod)
	return b
}

func decodePod(t *testing.T, b []byte) *corev1.Pod {
	t.Helper()
	var pod corev1.Pod
	if err := json.Unmarshal(b, &pod); err != nil {
		t.Fatal(err)
	}
	return &pod
}

// applyPatch applies d's patch to raw as the API server does (RFC 6902).
func applyPatch(t *testing.T, raw []byte, d Decision) []byte {
	t.Helper()
	b, err := json.Marshal(d.Patch)
	if err != nil {
		t.Fatal(err)
	}
	p, err := jsonpatch.DecodePatch(b)
	if err != nil {
		t.Fatal(err)
	}
	out, err := p.Apply(raw)
	if err != nil {
		t.Fatalf("patch %s does not apply: %v", b, err)
	}
	return out
}

func names(ctrs []corev1.Container) []string {
	var n []string
	for _, c := range ctrs {
		n = append(n, c.Name)
	}
	return n
}

func TestDecide(t *testing.T) {
	ours := []string{CaptureContainer, BootstrapContainer, SidecarContainer}
	for _, tc := range []struct {
		name        string
		ns          *corev1.Namespace
		sel         *mesh.Selector
		annotations map[string]string
		inits       []string
		hostNetwork bool
		skipped     string   // in Skipped; empty: injected
		err         string   // in the refusal
		wantInits   []string // init containers after the patch
		wantExclude string   // capture's --exclude-ports
	}{
		{name: "namespace in the mesh", ns: inMesh, wantInits: ours},
		{name: "annotated enabled", ns: inMesh, annotations: map[string]string{AnnotationMesh: "enabled"}, wantInits: ours},
		{name: "namespace outside the mesh", ns: outside, skipped: "namespace ops is not in the mesh (tlsplane.io/mesh=enabled)"},
		{name: "namespace unlabelled", ns: namespace("plain", nil), skipped: "not in the mesh"},
		{name: "another selector", ns: outside, sel: mustSelector(t, "team=ops"), wantInits: ours},
		{name: "the default label under another selector", ns: inMesh, sel: mustSelector(t, "team=ops"), skipped: "not in the mesh (team=ops)"},
		{name: "annotated disabled", ns: inMesh, annotations: map[string]string{AnnotationMesh: "disabled"}, skipped: "annotated tlsplane.io/mesh: disabled"},
		{name: "annotation typo", ns: inMesh, annotations: map[string]string{AnnotationMesh: "disable"}, err: `annotation tlsplane.io/mesh: "disable": want disabled or enabled`},
		{name: "injected already", ns: inMesh, inits: []string{CaptureContainer, BootstrapContainer, SidecarContainer, "migrate"}, skipped: "injected already: it has container " + CaptureContainer},
		{name: "one of ours is enough", ns: inMesh, inits: []string{"migrate", SidecarContainer}, skipped: "injected already: it has container " + SidecarContainer},
		{name: "host network", ns: inMesh, hostNetwork: true, skipped: "hostNetwork"},
		{name: "existing init containers kept in order, after ours", ns: inMesh, inits: []string{"migrate", "seed"},
			wantInits: append(slices.Clone(ours), "migrate", "seed")},
		{name: "excluded ports", ns: inMesh, annotations: map[string]string{AnnotationExcludePorts: " 6379, 5432"}, wantInits: ours, wantExclude: "5432,6379"},
		{name: "excluded port not a number", ns: inMesh, annotations: map[string]string{AnnotationExcludePorts: "5432,db"}, err: `annotation tlsplane.io/mesh-exclude-ports: "db" is not a TCP port`},
		{name: "excluded port 0", ns: inMesh, annotations: map[string]string{AnnotationExcludePorts: "0"}, err: `"0" is not a TCP port`},
		{name: "excluded port too large", ns: inMesh, annotations: map[string]string{AnnotationExcludePorts: "70000"}, err: `"70000" is not a TCP port`},
		{name: "excluded capture port", ns: inMesh, annotations: map[string]string{AnnotationExcludePorts: "15001"}, err: "excluded port 15001 is the capture port"},
		{name: "excluded twice", ns: inMesh, annotations: map[string]string{AnnotationExcludePorts: "22,22"}, err: "excluded port 22 given twice"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			raw := podJSON(tc.annotations, tc.inits...)
			pod := decodePod(t, raw)
			pod.Spec.HostNetwork = tc.hostNetwork
			d, err := Decide(testConfig, tc.sel, tc.ns, pod)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("error %v, want one with %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if tc.skipped != "" {
				if d.Patch != nil || !strings.Contains(d.Skipped, tc.skipped) {
					t.Fatalf("decision %+v, want skipped with %q", d, tc.skipped)
				}
				return
			}
			if d.Patch == nil {
				t.Fatalf("not injected: %s", d.Skipped)
			}
			patched := applyPatch(t, raw, d)
			got := decodePod(t, patched)
			if n := names(got.Spec.InitContainers); !slices.Equal(n, tc.wantInits) {
				t.Fatalf("init containers %q, want %q", n, tc.wantInits)
			}
			if n := names(got.Spec.Containers); !slices.Equal(n, []string{"app"}) {
				t.Fatalf("containers %q, want the Pod's own", n)
			}
			checkInjected(t, got, tc.wantExclude)
			// The Pod's own fields survive, even those corev1 does not know.
			for _, name := range tc.inits {
				if !strings.Contains(string(patched), `"futureField":"`+name+`"`) {
					t.Fatalf("init container %s lost its futureField:\n%s", name, patched)
				}
			}
			if len(tc.inits) > 0 && got.Spec.Volumes[0].Name != "data" {
				t.Fatalf("volumes %+v: the Pod's own volume is not first", got.Spec.Volumes)
			}
			// A second pass changes nothing.
			again, err := Decide(testConfig, tc.sel, tc.ns, got)
			if err != nil || again.Patch != nil || !strings.Contains(again.Skipped, "injected already") {
				t.Fatalf("second pass: %+v, %v; want skipped as injected already", again, err)
			}
		})
	}
}

// checkInjected checks what each injected step must carry, field by field
// from the design (docs/mesh.md), not from the code that builds them.
func checkInjected(t *testing.T, pod *corev1.Pod, exclude string) {
	t.Helper()
	byName := map[string]corev1.Container{}
	for _, c := range pod.Spec.InitContainers {
		byName[c.Name] = c
	}
	capture, boot, side := byName[CaptureContainer], byName[BootstrapContainer], byName[SidecarContainer]

	wantCapture := []string{"capture", "--sidecar-uid", "1337", "--port", "15001"}
	if exclude != "" {
		wantCapture = append(wantCapture, "--exclude-ports", exclude)
	}
	if capture.Image != "tlsplane:test" || !slices.Equal(capture.Args, wantCapture) {
		t.Errorf("capture: image %s args %q, want tlsplane:test %q", capture.Image, capture.Args, wantCapture)
	}
	if sc := capture.SecurityContext; sc == nil || sc.Capabilities == nil || !slices.Equal(sc.Capabilities.Add, []corev1.Capability{"NET_ADMIN"}) ||
		!slices.Equal(sc.Capabilities.Drop, []corev1.Capability{"ALL"}) || sc.RunAsUser == nil || *sc.RunAsUser != 0 {
		t.Errorf("capture security context %+v: want root with NET_ADMIN alone", capture.SecurityContext)
	}
	if capture.RestartPolicy != nil || boot.RestartPolicy != nil {
		t.Errorf("the capture and the bootstrap must run once, before the sidecar")
	}

	wantBoot := []string{"sidecar-bootstrap", "--xds-address", "tlsplane-xds.tlsplane-system.svc:18000", "--capture-port", "15001", "--admin-port", "15000", "-o", "/etc/tlsplane/mesh/envoy.yaml"}
	if boot.Image != "tlsplane:test" || !slices.Equal(boot.Args, wantBoot) {
		t.Errorf("bootstrap: image %s args %q, want %q", boot.Image, boot.Args, wantBoot)
	}
	if side.Image != "envoy:test" || !slices.Equal(side.Command, []string{"envoy"}) || !slices.Equal(side.Args, []string{"-c", "/etc/tlsplane/mesh/envoy.yaml"}) {
		t.Errorf("sidecar: image %s command %q args %q", side.Image, side.Command, side.Args)
	}
	if side.RestartPolicy == nil || *side.RestartPolicy != corev1.ContainerRestartPolicyAlways {
		t.Errorf("sidecar restartPolicy %v, want Always (a native sidecar)", side.RestartPolicy)
	}
	for _, c := range []corev1.Container{boot, side} {
		sc := c.SecurityContext
		if sc == nil || sc.RunAsUser == nil || *sc.RunAsUser != 1337 || sc.RunAsNonRoot == nil || !*sc.RunAsNonRoot || sc.Capabilities == nil || len(sc.Capabilities.Add) != 0 {
			t.Errorf("%s security context %+v: want UID 1337, no capability", c.Name, sc)
		}
		env := map[string]string{}
		for _, e := range c.Env {
			if e.ValueFrom != nil && e.ValueFrom.FieldRef != nil {
				env[e.Name] = e.ValueFrom.FieldRef.FieldPath
			}
		}
		want := map[string]string{"POD_NAME": "metadata.name", "POD_NAMESPACE": "metadata.namespace", "POD_SERVICE_ACCOUNT": "spec.serviceAccountName"}
		for k, v := range want {
			if env[k] != v {
				t.Errorf("%s env %s from %q, want the downward API's %s", c.Name, k, env[k], v)
			}
		}
		if len(c.VolumeMounts) != 1 || c.VolumeMounts[0].Name != Volume || c.VolumeMounts[0].MountPath != "/etc/tlsplane/mesh" {
			t.Errorf("%s mounts %+v, want %s at /etc/tlsplane/mesh", c.Name, c.VolumeMounts, Volume)
		}
	}
	last := pod.Spec.Volumes[len(pod.Spec.Volumes)-1]
	if last.Name != Volume || last.EmptyDir == nil || last.EmptyDir.Medium != corev1.StorageMediumMemory {
		t.Errorf("volumes %+v: want the in-memory emptyDir %s last", pod.Spec.Volumes, Volume)
	}
}

func TestDecideRefusesOurVolumeName(t *testing.T) {
	pod := decodePod(t, podJSON(nil))
	pod.Spec.Volumes = []corev1.Volume{{Name: Volume}}
	if _, err := Decide(testConfig, nil, inMesh, pod); err == nil || !strings.Contains(err.Error(), `spec.volumes: "tlsplane-mesh"`) {
		t.Fatalf("error %v, want one naming spec.volumes", err)
	}
}

func mustSelector(t *testing.T, s string) *mesh.Selector {
	t.Helper()
	sel, err := mesh.ParseSelector(s)
	if err != nil {
		t.Fatal(err)
	}
	return sel
}

func TestConfigCheck(t *testing.T) {
	for _, tc := range []struct {
		name string
		edit func(*Config)
		err  string
	}{
		{"valid", func(*Config) {}, ""},
		{"no sidecar image", func(c *Config) { c.SidecarImage = "" }, "sidecar image: empty"},
		{"no tlsplane image", func(c *Config) { c.TLSPlaneImage = "" }, "tlsplane image: empty"},
		{"address without port", func(c *Config) { c.XDSAddress = "tlsplane" }, `xDS address "tlsplane"`},
		{"address port 0", func(c *Config) { c.XDSAddress = "tlsplane:0" }, `xDS address "tlsplane:0"`},
		{"root sidecar", func(c *Config) { c.SidecarUID = 0 }, "sidecar UID 0"},
		{"same ports", func(c *Config) { c.AdminPort = 15001 }, "capture port and admin port are both 15001"},
		{"capture port too large", func(c *Config) { c.CapturePort = 70000 }, "capture port 70000"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := testConfig
			tc.edit(&c)
			err := c.Check()
			if (err == nil) != (tc.err == "") || (err != nil && !strings.Contains(err.Error(), tc.err)) {
				t.Fatalf("Check: %v, want %q", err, tc.err)
			}
		})
	}
}

// TestDecideWithIdentity: with an identity CSI driver the sidecar mounts
// the workload certificate and the bootstrap names its files; without,
// nothing of it is injected (TestDecide's volumes end with the bootstrap's).
func TestDecideWithIdentity(t *testing.T) {
	c := testConfig
	c.IdentityCSIDriver = "spiffe.csi.cert-manager.io"
	for _, inits := range [][]string{nil, {"migrate"}} {
		raw := podJSON(nil, inits...)
		d, err := Decide(c, nil, inMesh, decodePod(t, raw))
		if err != nil || d.Patch == nil {
			t.Fatalf("%+v, %v", d, err)
		}
		got := decodePod(t, applyPatch(t, raw, d))
		last := got.Spec.Volumes[len(got.Spec.Volumes)-1]
		if last.Name != IdentityVolume || last.CSI == nil || last.CSI.Driver != "spiffe.csi.cert-manager.io" || last.CSI.ReadOnly == nil || !*last.CSI.ReadOnly {
			t.Fatalf("volumes %+v: want the read-only CSI volume of the driver last", got.Spec.Volumes)
		}
		if got.Spec.Volumes[len(got.Spec.Volumes)-2].Name != Volume {
			t.Fatalf("volumes %+v: want the bootstrap's before the identity's", got.Spec.Volumes)
		}
		boot, side := got.Spec.InitContainers[1], got.Spec.InitContainers[2]
		wantTLS := []string{"--xds-tls-cert", "/var/run/tlsplane/identity/tls.crt", "--xds-tls-key", "/var/run/tlsplane/identity/tls.key", "--xds-tls-ca", "/var/run/tlsplane/identity/ca.crt"}
		if !slices.Equal(boot.Args[len(boot.Args)-6:], wantTLS) {
			t.Fatalf("bootstrap args %q, want them ending %q", boot.Args, wantTLS)
		}
		if len(side.VolumeMounts) != 2 || side.VolumeMounts[1] != (corev1.VolumeMount{Name: IdentityVolume, MountPath: "/var/run/tlsplane/identity", ReadOnly: true}) {
			t.Fatalf("sidecar mounts %+v, want the identity read-only at /var/run/tlsplane/identity", side.VolumeMounts)
		}
		if len(boot.VolumeMounts) != 1 {
			t.Fatalf("bootstrap mounts %+v: it writes paths, it needs no certificate", boot.VolumeMounts)
		}
	}
	pod := decodePod(t, podJSON(nil))
	pod.Spec.Volumes = []corev1.Volume{{Name: IdentityVolume}}
	if _, err := Decide(c, nil, inMesh, pod); err == nil || !strings.Contains(err.Error(), `spec.volumes: "tlsplane-mesh-identity"`) {
		t.Fatalf("error %v, want one naming the volume", err)
	}
}
