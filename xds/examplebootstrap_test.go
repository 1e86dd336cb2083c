package xds

import (
	"os"
	"regexp"
	"strings"
	"testing"
)

// The example bootstrap's stats matcher must keep every counter tlsplane
// reads, and little else: Envoy's regexes are RE2, as Go's are.
func TestExampleBootstrapKeepsTheCountersRead(t *testing.T) {
	boot, err := os.ReadFile("../examples/envoy.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(boot), "envoy.stat_sinks.metrics_service") {
		t.Fatal("examples/envoy.yaml has no metrics service sink")
	}
	m := regexp.MustCompile(`regex: '([^']+)'`).FindSubmatch(boot)
	if m == nil {
		t.Fatal("examples/envoy.yaml has no stats matcher regex")
	}
	re := regexp.MustCompile(string(m[1]))
	for _, c := range ReadCounters {
		if name := "cluster.shop/pay.v2/8443." + c; !re.MatchString(name) {
			t.Errorf("the matcher drops %s", name)
		}
	}
	for _, name := range []string{"cluster.shop/p/1.upstream_rq_total", "listener.0.0.0.0_443.ssl.handshake", "cluster.shop/p/1.ssl.ciphers.TLS_AES_128_GCM_SHA256"} {
		if re.MatchString(name) {
			t.Errorf("the matcher keeps %s, which tlsplane does not read", name)
		}
	}
}
