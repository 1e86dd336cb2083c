package envoy

import (
	"fmt"
	"sort"
	"strings"
	"testing"
)

// trafficCase is one static scenario: its own Service on a backend, the
// policies and CA objects next to it, and the one request's expected result.
type trafficCase struct {
	name     string
	be       *backend
	policies []policy
	cas      []object
	// failClosed: the policy is not accepted; Envoy may keep the cluster
	// warming, and the backend must receive nothing at all.
	failClosed bool
	want       outcome
}

// outcome is what the request through Envoy must show.
type outcome struct {
	ok         bool   // 200 from the backend; otherwise a 5xx from Envoy
	sni        string // the SNI the backend saw (ok), or Envoy's cluster SNI
	tlsVersion string // e.g. "TLS 1.2"; "" = any
	proto      string // e.g. "HTTP/2.0"; "" = any
	plain      bool   // the backend saw no TLS at all
	// clientSubject is the client certificate the backend saw ("" none).
	clientSubject string
	// failStat is the cluster's TLS failure counter the request must move,
	// e.g. "ssl.fail_verify_san"; "" = none checked.
	failStat string
}

const svcPortNumber = 443

func (c trafficCase) svc() string { return c.name }

// objects is the scenario's manifest file.
func (c trafficCase) objects() []object {
	objs := serviceWithEndpoints(c.svc(), svcPort{name: "https", port: svcPortNumber, backendPort: c.be.port})
	objs = append(objs, c.cas...)
	for _, p := range c.policies {
		// Names are unique per namespace, across all scenario files.
		p.name = c.name + "-" + p.name
		if len(p.targets) == 0 {
			p.targets = []target{{svc: c.svc()}}
		}
		objs = append(objs, p.object())
	}
	return objs
}

// ready is the Envoy state in which the request is meaningful.
func (c trafficCase) ready() func(clusterView) error {
	switch {
	case c.failClosed:
		return present
	case c.want.plain:
		return activePlain(c.be.port)
	case !c.want.ok:
		return activeTLS(c.want.sni, c.be.port)
	default:
		return activeTLS("", c.be.port)
	}
}

// run waits for Envoy to apply the scenario, then sends one request.
func (c trafficCase) run(t *testing.T, e *env, s *summary) {
	cluster := clusterName(c.svc(), svcPortNumber)
	var before backendCounts
	if c.failClosed {
		before = c.be.counts(t)
	}
	view := e.waitCluster(t, cluster, c.ready())
	statsBefore, err := e.envoy.Stats()
	if err != nil {
		t.Fatal(err)
	}
	r := e.request(t, cluster, "/"+c.name)
	statsAfter, err := e.envoy.Stats()
	if err != nil {
		t.Fatal(err)
	}
	s.note(c.name, "%s", shorten(r.String()))
	if r.Status != 200 {
		s.note(c.name, "%d from Envoy; cluster TLS counters: %s", r.Status, sslDelta(statsBefore, statsAfter, cluster))
	}
	t.Logf("cluster %s: %s; response: %s", cluster, view, r)
	c.check(t, r)
	if w := c.want.failStat; w != "" {
		name := "cluster." + cluster + "." + w
		if statsAfter[name] <= statsBefore[name] {
			t.Errorf("Envoy's %s did not move (%d -> %d): the request failed for another reason; TLS stats after: %s",
				name, statsBefore[name], statsAfter[name], sslStats(statsAfter, cluster))
		}
	}
	if c.failClosed {
		after := c.be.counts(t)
		if after.Requests != before.Requests || after.Plaintext != before.Plaintext {
			t.Errorf("backend %s received traffic for a fail-closed port: before %+v, after %+v", c.be.name, before, after)
		}
		if view.active && !view.hasTLS {
			t.Errorf("fail-closed cluster %s has no TLS transport socket: %s", cluster, view.raw)
		}
	}
}

func (c trafficCase) check(t *testing.T, r response) {
	t.Helper()
	w := c.want
	if !w.ok {
		if r.Status < 500 {
			t.Fatalf("want a 5xx from Envoy, got %s", r)
		}
		return
	}
	if r.Status != 200 {
		t.Fatalf("want 200, got %s", r)
	}
	if r.Echo.Name != c.be.name {
		t.Errorf("answered by backend %q, want %q", r.Echo.Name, c.be.name)
	}
	if w.plain {
		if r.Echo.TLSVersion != "" || r.Echo.SNI != "" {
			t.Errorf("want plaintext, backend saw TLS %q with SNI %q", r.Echo.TLSVersion, r.Echo.SNI)
		}
		return
	}
	if r.Echo.TLSVersion == "" {
		t.Errorf("backend saw no TLS")
	}
	if r.Echo.SNI != w.sni {
		t.Errorf("backend saw SNI %q, want %q", r.Echo.SNI, w.sni)
	}
	if w.tlsVersion != "" && r.Echo.TLSVersion != w.tlsVersion {
		t.Errorf("backend negotiated %q, want %q", r.Echo.TLSVersion, w.tlsVersion)
	}
	if r.Echo.ClientSubject != w.clientSubject {
		t.Errorf("backend saw client certificate %q, want %q", r.Echo.ClientSubject, w.clientSubject)
	}
	if w.proto != "" && r.Echo.Proto != w.proto {
		t.Errorf("backend saw %s (ALPN %q), want %s", r.Echo.Proto, r.Echo.ALPN, w.proto)
	}
}

func shorten(s string) string {
	if len(s) > 160 {
		return s[:160] + "…"
	}
	return s
}

// sslDelta lists a cluster's TLS counters that one request moved.
func sslDelta(before, after map[string]int64, cluster string) string {
	prefix := "cluster." + cluster + ".ssl."
	var out []string
	for k, v := range after {
		if strings.HasPrefix(k, prefix) && v != before[k] {
			out = append(out, fmt.Sprintf("%s +%d", strings.TrimPrefix(k, prefix), v-before[k]))
		}
	}
	sort.Strings(out)
	if len(out) == 0 {
		return "none moved"
	}
	return strings.Join(out, ", ")
}

// sslStats lists a cluster's non-zero TLS counters, for failure messages.
func sslStats(stats map[string]int64, cluster string) string {
	prefix := "cluster." + cluster + ".ssl."
	var out []string
	for k, v := range stats {
		if strings.HasPrefix(k, prefix) && v != 0 {
			out = append(out, fmt.Sprintf("%s=%d", strings.TrimPrefix(k, prefix), v))
		}
	}
	sort.Strings(out)
	return strings.Join(out, " ")
}
