package main

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	listenerv3 "github.com/envoyproxy/go-control-plane/envoy/config/listener/v3"
	sotw "github.com/envoyproxy/go-control-plane/pkg/client/sotw/v3"
	"github.com/envoyproxy/go-control-plane/pkg/resource/v3"
)

// gatewayCertificateOutside is examples/gateway with its listener
// certificate's Secret moved outside the directory, which holds a symlink
// to it instead. It returns the directory, the link and its target.
func gatewayCertificateOutside(t *testing.T) (dir, link, target string) {
	t.Helper()
	dir = copyGatewayExample(t)
	link = filepath.Join(dir, "edge-certificate.yaml")
	target = filepath.Join(t.TempDir(), "edge-certificate.yaml")
	if err := os.Rename(link, target); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
	return dir, link, target
}

// TestServeRefusesASecretLinkedFromOutside: `serve --dir` does not serve
// a Secret a symlink brings in from outside the directory: the Gateway's
// HTTPS listener, which needs it, is not served, and the rest is;
// --dir-follow-external-links serves it.
func TestServeRefusesASecretLinkedFromOutside(t *testing.T) {
	dir, _, _ := gatewayCertificateOutside(t)
	for _, c := range []struct {
		flags     []string
		listeners []string
		errors    string
	}{
		{nil, []string{"shop/edge/10080"}, "tlsplane_source_file_errors_total 1"},
		{[]string{"--dir-follow-external-links"}, []string{"shop/edge/10080", "shop/edge/10443"}, "tlsplane_source_file_errors_total 0"},
	} {
		p := startServe(t, dir, c.flags...)
		p.waitAdmin(t, "/readyz", 200, "ready")
		if got := fleetListeners(t, p.xds, "shop/edge"); !slices.Equal(got, c.listeners) {
			t.Errorf("%v: LDS for fleet shop/edge = %v, want %v", c.flags, got, c.listeners)
		}
		p.waitAdmin(t, "/metrics", 200, c.errors)
	}
}

// fleetListeners fetches the listeners an Envoy of fleet gets, sorted.
func fleetListeners(t *testing.T, addr, fleet string) []string {
	t.Helper()
	conn, ctx := xdsConn(t, addr)
	c := sotw.NewADSClient(ctx, &corev3.Node{Id: "scope-1", Cluster: fleet}, resource.ListenerType)
	if err := c.InitConnect(conn); err != nil {
		t.Fatal(err)
	}
	resp, err := c.Fetch()
	if err != nil {
		t.Fatalf("LDS fetch: %v", err)
	}
	var names []string
	for _, a := range resp.Resources {
		l := &listenerv3.Listener{}
		if err := a.UnmarshalTo(l); err != nil {
			t.Fatal(err)
		}
		names = append(names, l.GetName())
	}
	slices.Sort(names)
	return names
}

// TestTranslateRefusesASecretLinkedFromOutside: `tlsplane translate DIR`
// fails naming the file, the link's target and the flag; with
// --dir-follow-external-links it prints what the Secret in place gives.
func TestTranslateRefusesASecretLinkedFromOutside(t *testing.T) {
	t.Setenv("SOURCE_DATE_EPOCH", "1767225600")
	dir, link, target := gatewayCertificateOutside(t)
	var stdout, stderr bytes.Buffer
	err := runTranslate([]string{dir}, &stdout, &stderr)
	want := link + `: symlink to "` + target + `" leads outside the directory `
	if err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "--dir-follow-external-links") {
		t.Fatalf("translate %s: %v, want an error %q… naming --dir-follow-external-links", dir, err, want)
	}
	if stdout.Len() != 0 {
		t.Errorf("translate printed a document on error")
	}

	var inPlace, followed bytes.Buffer
	if err := runTranslate([]string{copyGatewayExample(t)}, &inPlace, io.Discard); err != nil {
		t.Fatal(err)
	}
	if err := runTranslate([]string{"--dir-follow-external-links", dir}, &followed, io.Discard); err != nil {
		t.Fatalf("translate --dir-follow-external-links %s: %v", dir, err)
	}
	if !bytes.Equal(followed.Bytes(), inPlace.Bytes()) {
		t.Errorf("translate --dir-follow-external-links differs from the Secret in place")
	}
}

// The flag is serve's and translate's, off by default, listed with the
// manifest limits.
func TestFollowExternalLinksFlag(t *testing.T) {
	for args, want := range map[string]bool{"": false, "--dir-follow-external-links": true, "--dir-follow-external-links=false": false} {
		cfg, err := parseServeFlags(append([]string{"--dir", "."}, strings.Fields(args)...), io.Discard)
		if err != nil || cfg.dirLimits.FollowExternalLinks != want {
			t.Errorf("serve %q: %v, FollowExternalLinks=%v; want %v", args, err, cfg != nil && cfg.dirLimits.FollowExternalLinks, want)
		}
	}
	var help bytes.Buffer
	if err := runTranslate([]string{"--help"}, &help, io.Discard); err != nil || !strings.Contains(help.String(), "--dir-follow-external-links") {
		t.Errorf("translate --help: %v, want the flag listed:\n%s", err, help.String())
	}
}
