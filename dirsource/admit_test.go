package dirsource

import (
	"bytes"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tlsplane/tlsplane/crds"
	"github.com/tlsplane/tlsplane/manifests"
	"github.com/tlsplane/tlsplane/perf/world"
)

// startManifests runs a source over dir with the manifests parser, whose
// Gateway API objects are admitted against the experimental CRDs.
func startManifests(t *testing.T, dir string) *running {
	t.Helper()
	return startWith(t, Options{Dir: dir, Parse: manifests.Parser(nil)}, 30*time.Second)
}

// waitFor waits (at most 10s) until ok holds of what the source serves.
func (r *running) waitFor(t *testing.T, what string, ok func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !ok() {
		if time.Now().After(deadline) {
			t.Fatalf("not %s within 10s; logs:\n%s", what, r.logs)
		}
		select {
		case <-r.changes:
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// serviceFile is Service i of the generated world, its EndpointSlice on
// port.
func serviceFile(t *testing.T, i, port int) string {
	t.Helper()
	var b bytes.Buffer
	if err := world.WriteServices(&b, i, i+1, worldCA, port); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// An edit of one file re-admits that file's objects only, and a file
// whose objects the API server would refuse keeps its last accepted
// objects, its log line naming every refused one. Not parallel: it reads
// the process's admission count.
func TestEditReadmitsOnlyThatFile(t *testing.T) {
	const n = 20
	dir := t.TempDir()
	writeWorld(t, dir, n, 1)
	admitted := func() uint64 {
		v, err := crds.Load(crds.Experimental)
		if err != nil {
			t.Fatal(err)
		}
		return v.Admitted()
	}
	before := admitted()
	r := startManifests(t, dir)
	// A GatewayClass and a Gateway, and each Service's BackendTLSPolicy
	// and HTTPRoute.
	if got, want := admitted()-before, uint64(2+2*n); got != want {
		t.Fatalf("the first read admitted %d objects, want %d", got, want)
	}
	port := func() int32 {
		for _, es := range r.src.Inputs().EndpointSlices {
			if es.Name == "svc-7-x" {
				return *es.Ports[0].Port
			}
		}
		return 0
	}

	before = admitted()
	path := filepath.Join(dir, fmt.Sprintf("services-%06d.yaml", 7))
	writeAtomically(t, path, serviceFile(t, 7, 9443))
	r.waitFor(t, "serving svc-7's new port", func() bool { return port() == 9443 })
	if got := admitted() - before; got != 2 {
		t.Errorf("the edit admitted %d objects, want svc-7's BackendTLSPolicy and HTTPRoute (2); %d would be the whole directory", got, 2+2*n)
	}

	// 17 rules, and a policy with both CA sources: both refused.
	bad := strings.Replace(serviceFile(t, 7, 9000), "  rules:\n", "  rules:\n"+strings.Repeat("  - backendRefs: [{name: svc-7, port: 443}]\n", 16), 1)
	bad = strings.Replace(bad, "    caCertificateRefs:\n", "    wellKnownCACertificates: System\n    caCertificateRefs:\n", 1)
	writeAtomically(t, path, bad)
	r.waitFor(t, "logging the refusal", func() bool { return strings.Contains(r.logs.String(), "HTTPRoute team-7/svc-7: spec.rules") })
	logs := r.logs.String()
	for _, want := range []string{
		path + ":", "BackendTLSPolicy team-7/svc-7-tls: spec.validation: Invalid value: must not contain both CACertificateRefs and WellKnownCACertificates",
		"HTTPRoute team-7/svc-7: spec.rules: Too many: 17: must have at most 16 items",
	} {
		if !strings.Contains(logs, want) {
			t.Errorf("logs lack %q:\n%s", want, logs)
		}
	}
	// Refused one object at a time: the EndpointSlice of the same file is
	// served as edited, the refused route and policy as they were.
	r.waitFor(t, "serving svc-7's EndpointSlice as edited", func() bool { return port() == 9000 })
	in := r.src.Inputs()
	for _, rt := range in.HTTPRoutes {
		if rt.Name == "svc-7" && len(rt.Spec.Rules) > 16 {
			t.Errorf("the refused HTTPRoute is served with %d rules", len(rt.Spec.Rules))
		}
	}
	var policy bool
	for _, p := range in.Policies {
		if p.Name == "svc-7-tls" {
			policy = true
			if p.Spec.Validation.WellKnownCACertificates != nil {
				t.Errorf("the refused BackendTLSPolicy is served as edited: %+v", p.Spec.Validation)
			}
		}
	}
	if !policy {
		t.Errorf("the refused BackendTLSPolicy's last accepted version is no longer served")
	}
}

// On a first read, a file with a refused object serves its others, and
// the refused one only once it is admitted; the file counts as failing
// until then.
func TestRefusedObjectOnFirstReadLeavesItsSiblingsServed(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "services-000003.yaml")
	bad := strings.Replace(serviceFile(t, 3, 8443), "  rules:\n", "  rules:\n"+strings.Repeat("  - backendRefs: [{name: svc-3, port: 443}]\n", 16), 1)
	writeAtomically(t, path, bad)
	r := startManifests(t, dir)
	served := func(kind, name string) bool {
		in := r.src.Inputs()
		switch kind {
		case "HTTPRoute":
			for _, o := range in.HTTPRoutes {
				if o.Name == name {
					return true
				}
			}
		case "Service":
			for _, o := range in.Services {
				if o.Name == name {
					return true
				}
			}
		case "BackendTLSPolicy":
			for _, o := range in.Policies {
				if o.Name == name {
					return true
				}
			}
		}
		return false
	}
	r.waitFor(t, "serving svc-3's Service", func() bool { return served("Service", "svc-3") })
	if !served("BackendTLSPolicy", "svc-3-tls") {
		t.Errorf("the admitted BackendTLSPolicy beside the refused route is not served")
	}
	if served("HTTPRoute", "svc-3") {
		t.Errorf("the refused HTTPRoute is served")
	}
	if got := value(t, r.src.metrics.failingFiles); got != 1 {
		t.Errorf("tlsplane_source_files_failing %v, want 1", got)
	}
	writeAtomically(t, path, serviceFile(t, 3, 8443))
	r.waitFor(t, "serving the HTTPRoute once admitted", func() bool { return served("HTTPRoute", "svc-3") })
}
