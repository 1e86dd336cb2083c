package main

import (
	"bytes"
	"encoding/json"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/envoyproxy/go-control-plane/pkg/resource/v3"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/tlsplane/tlsplane/xds"
)

var statusNow = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

func ago(d time.Duration) *time.Time { t := statusNow.Add(-d); return &t }

// fixtureConnections: a synced SotW Envoy, a delta one with a stale EDS,
// and one whose EDS is rejected.
func fixtureConnections() xds.Connections {
	synced := func(typeURL string) xds.TypeStatus {
		return xds.TypeStatus{TypeURL: typeURL, State: xds.Synced, Sent: "v1", Acked: "v1"}
	}
	return xds.Connections{At: statusNow, Connections: []xds.Connection{
		{Node: "envoy-a", Fleet: "shop", API: "sotw", Peer: "127.0.0.1:40001", Since: statusNow.Add(-90 * time.Second),
			Types: []xds.TypeStatus{synced(resource.ClusterType), synced(resource.EndpointType), synced(resource.SecretType)}},
		{Node: "envoy-b", Fleet: "shop", API: "delta", Peer: "127.0.0.1:40002", Since: statusNow.Add(-3 * time.Hour),
			Types: []xds.TypeStatus{synced(resource.ClusterType),
				{TypeURL: resource.EndpointType, State: xds.Stale, Sent: "v2", Acked: "v1", BehindSince: ago(3 * time.Second)},
				{TypeURL: resource.SecretType, State: xds.NotSent}}},
		{Node: "envoy-c", Fleet: "edge", API: "delta", Peer: "127.0.0.1:40003", Since: statusNow.Add(-10 * time.Minute),
			Types: []xds.TypeStatus{synced(resource.ClusterType),
				{TypeURL: resource.EndpointType, State: xds.NACKed, Sent: "v9", Acked: "v8", BehindSince: ago(time.Minute),
					NACK: &xds.Rejected{Version: "v9", Message: "malformed IP address: 999.0.0.1.\n  Consider setting resolver_name", At: *ago(time.Minute)}},
				synced(resource.SecretType)}},
	}}
}

func TestConnectionsTable(t *testing.T) {
	got := string(connectionsTable(fixtureConnections()))
	want := `NODE     FLEET  API    PEER             SINCE  CDS     EDS             SDS       LDS  RDS
envoy-a  shop   sotw   127.0.0.1:40001  90s    SYNCED  SYNCED          SYNCED    -    -
envoy-b  shop   delta  127.0.0.1:40002  3h     SYNCED  STALE (for 3s)  NOT SENT  -    -
envoy-c  edge   delta  127.0.0.1:40003  10m    SYNCED  NACKED          SYNCED    -    -
    EDS NACKED version v9: malformed IP address: 999.0.0.1. Consider setting resolver_name
`
	if got != want {
		t.Errorf("table:\n%s\nwant:\n%s", got, want)
	}
	if got := string(connectionsTable(xds.Connections{At: statusNow})); got != "No Envoy is connected.\n" {
		t.Errorf("no connection: %q", got)
	}
}

func TestAge(t *testing.T) {
	for d, want := range map[time.Duration]string{
		-time.Second: "0s", 0: "0s", 1500 * time.Millisecond: "1s", 119 * time.Second: "119s",
		2 * time.Minute: "2m", 119 * time.Minute: "119m", 2 * time.Hour: "2h", 47 * time.Hour: "47h", 72 * time.Hour: "3d",
	} {
		if got := age(d); got != want {
			t.Errorf("age(%v) = %q, want %q", d, got, want)
		}
	}
}

// adminServer serves /debug/connections and /debug/status on 127.0.0.1.
func adminServer(t *testing.T, status string) string {
	t.Helper()
	mux := http.NewServeMux()
	mux.HandleFunc("GET /debug/connections", func(w http.ResponseWriter, _ *http.Request) {
		json.NewEncoder(w).Encode(fixtureConnections())
	})
	mux.HandleFunc("GET /debug/status", func(w http.ResponseWriter, _ *http.Request) { w.Write([]byte(status)) })
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv.Listener.Addr().String()
}

func TestStatusJSONRoundTrips(t *testing.T) {
	addr := adminServer(t, "{}")
	var out bytes.Buffer
	if err := runStatus([]string{"--admin", addr, "-o", "json"}, &out); err != nil {
		t.Fatal(err)
	}
	var got xds.Connections
	if err := json.Unmarshal(out.Bytes(), &got); err != nil {
		t.Fatalf("-o json: %v\n%s", err, &out)
	}
	if len(got.Connections) != 3 || got.Connections[2].Types[1].NACK == nil || got.Connections[2].Types[1].Acked != "v8" {
		t.Errorf("-o json lost the NACK or the acked version:\n%s", &out)
	}
	out.Reset()
	if err := runStatus([]string{"--admin", "http://" + addr + "/"}, &out); err != nil || !strings.Contains(out.String(), "EDS NACKED version v9") {
		t.Errorf("with a URL: %v\n%s", err, &out)
	}
}

const policyStatusDoc = `{
  "policies": [
    {"namespace": "shop", "name": "other-tls", "status": {"ancestors": []}},
    {"namespace": "shop", "name": "pay-tls", "clusters": ["shop/pay/443", "shop/pay/8443"],
     "status": {"ancestors": [{"ancestorRef": {"group": "", "kind": "Service", "name": "pay"}, "controllerName": "tlsplane.io/controller",
       "conditions": [
         {"type": "Accepted", "status": "True", "reason": "Accepted", "message": "", "lastTransitionTime": "2026-01-02T03:00:00Z"},
         {"type": "tlsplane.io/DataPlaneAccepted", "status": "False", "reason": "Rejected", "message": "fleet edge rejected EDS", "lastTransitionTime": "2026-01-02T03:00:00Z"}]}]}}
  ],
  "rejections": [
    {"node": "envoy-c", "fleet": "edge", "typeURL": "type.googleapis.com/envoy.config.endpoint.v3.ClusterLoadAssignment", "version": "v9",
     "message": "malformed IP address: 999.0.0.1", "policies": [{"Namespace": "shop", "Name": "pay-tls"}]},
    {"node": "envoy-d", "fleet": "ops", "typeURL": "type.googleapis.com/envoy.config.cluster.v3.Cluster", "version": "v2",
     "message": "unrelated", "policies": [{"Namespace": "ops", "Name": "audit-tls"}]}
  ],
  "handshakes": [
    {"fleet": "shop", "cluster": "shop/pay/443", "policies": [{"Namespace": "shop", "Name": "pay-tls"}], "failing": true,
     "reason": "CertificateVerifyFailed", "increases": {"ssl.fail_verify_error": 3}, "lastReport": "2026-01-02T03:04:00Z"},
    {"fleet": "shop", "cluster": "shop/other/443", "failing": false, "increases": {}, "lastReport": "2026-01-02T03:04:00Z"}
  ],
  "backendCertificates": [
    {"fleet": "edge", "cluster": "shop/pay/443", "host": "10.0.0.7:8443", "node": "envoy-c", "subject": "CN=pay.shop", "issuer": "CN=shop CA",
     "serial": "0a1b", "sans": ["DNS:pay.shop"], "notBefore": "2025-12-01T00:00:00Z", "notAfter": "2026-01-20T00:00:00Z",
     "version": "TLSv1.3", "cipher": "TLS_AES_128_GCM_SHA256", "firstSeen": "2026-01-02T03:00:00Z", "lastSeen": "2026-01-02T03:04:00Z",
     "policies": [{"Namespace": "shop", "Name": "pay-tls"}], "state": "Expiring"},
    {"fleet": "edge", "cluster": "ops/audit/443", "host": "10.0.9.9:443", "node": "envoy-d", "subject": "CN=audit", "issuer": "CN=ops CA",
     "serial": "ff", "notBefore": "2025-12-01T00:00:00Z", "notAfter": "2027-01-20T00:00:00Z",
     "version": "TLSv1.3", "cipher": "TLS_AES_128_GCM_SHA256", "firstSeen": "2026-01-02T03:00:00Z", "lastSeen": "2026-01-02T03:04:00Z",
     "policies": [{"Namespace": "ops", "Name": "audit-tls"}], "state": "Valid"}
  ]
}`

func TestStatusPolicy(t *testing.T) {
	addr := adminServer(t, policyStatusDoc)
	var out bytes.Buffer
	if err := runStatus([]string{"policy", "shop/pay-tls", "--admin", addr}, &out); err != nil {
		t.Fatal(err)
	}
	want := `BackendTLSPolicy shop/pay-tls

ANCESTOR          CONTROLLER              CONDITION                      STATUS  REASON    MESSAGE
Service shop/pay  tlsplane.io/controller  Accepted                       True    Accepted  -
                                          tlsplane.io/DataPlaneAccepted  False   Rejected  fleet edge rejected EDS

CLUSTERS
shop/pay/443
shop/pay/8443

HANDSHAKE WINDOWS
FLEET  CLUSTER       FAILING  REASON                   INCREASES                LAST REPORT
shop   shop/pay/443  true     CertificateVerifyFailed  ssl.fail_verify_error=3  2026-01-02T03:04:00Z

BACKEND CERTIFICATES
FLEET  CLUSTER       HOST           SUBJECT      ISSUER      SERIAL  NOT AFTER             STATE     VERSION  CIPHER                  LAST SEEN
edge   shop/pay/443  10.0.0.7:8443  CN=pay.shop  CN=shop CA  0a1b    2026-01-20T00:00:00Z  Expiring  TLSv1.3  TLS_AES_128_GCM_SHA256  2026-01-02T03:04:00Z

ENVOY REJECTIONS
FLEET  NODE     TYPE  VERSION  MESSAGE
edge   envoy-c  EDS   v9       malformed IP address: 999.0.0.1
`
	if out.String() != want {
		t.Errorf("status policy:\n%s\nwant:\n%s", &out, want)
	}

	out.Reset()
	if err := runStatus([]string{"policy", "shop/pay-tls", "--admin", addr, "-o", "json"}, &out); err != nil {
		t.Fatal(err)
	}
	var view policyView
	if err := json.Unmarshal(out.Bytes(), &view); err != nil {
		t.Fatal(err)
	}
	if len(view.Ancestors) != 1 || view.Ancestors[0].Conditions[1].Status != metav1.ConditionFalse || len(view.Clusters) != 2 ||
		len(view.Windows) != 1 || len(view.Rejected) != 1 || len(view.Certificates) != 1 || view.Certificates[0].Serial != "0a1b" || view.Windows[0].Policies[0] != (types.NamespacedName{Namespace: "shop", Name: "pay-tls"}) {
		t.Errorf("-o json:\n%s", &out)
	}

	for ref, want := range map[string]string{
		"shop/nope":   `BackendTLSPolicy shop/nope: not found; namespace "shop" has other-tls, pay-tls`,
		"bank/ledger": `BackendTLSPolicy bank/ledger: not found; tlsplane has no policy in namespace "bank"`,
		"pay-tls":     `policy "pay-tls": want NAMESPACE/NAME`,
	} {
		err := runStatus([]string{"policy", ref, "--admin", addr}, &out)
		if err == nil || err.Error() != want {
			t.Errorf("policy %s: %v, want %q", ref, err, want)
		}
	}
}

func TestStatusAdminErrors(t *testing.T) {
	// A port nothing listens on: taken, then released.
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := lis.Addr().String()
	lis.Close()
	err = runStatus([]string{"--admin", closed}, &bytes.Buffer{})
	if err == nil || !strings.Contains(err.Error(), "unreachable") || !strings.Contains(err.Error(), portForwardHint) {
		t.Errorf("admin unreachable: %v, want the port-forward line", err)
	}

	forbidden := httptest.NewServer(newAdminHandler(&fakeSnapshots{}, fakeStatuses{}, fakeConnections{}, newRegistry()))
	t.Cleanup(forbidden.Close)
	// The real handler, asked from a non-loopback address, answers 403.
	req := httptest.NewRequest(http.MethodGet, "/debug/connections", nil)
	req.RemoteAddr = "10.0.0.1:5000"
	rec := httptest.NewRecorder()
	forbidden.Config.Handler.ServeHTTP(rec, req)
	refusing := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(rec.Code)
		w.Write(rec.Body.Bytes())
	}))
	t.Cleanup(refusing.Close)
	err = runStatus([]string{"--admin", refusing.Listener.Addr().String()}, &bytes.Buffer{})
	if err == nil || !strings.Contains(err.Error(), "loopback") || !strings.Contains(err.Error(), portForwardHint) {
		t.Errorf("admin refusing: %v", err)
	}

	old := httptest.NewServer(http.NotFoundHandler())
	t.Cleanup(old.Close)
	err = runStatus([]string{"--admin", old.Listener.Addr().String()}, &bytes.Buffer{})
	if err == nil || !strings.Contains(err.Error(), "has no /debug/connections") {
		t.Errorf("an admin server without the endpoint: %v", err)
	}

	for _, args := range [][]string{{"-o", "yaml"}, {"nodes"}, {"policy"}, {"policy", "a/b", "c/d"}} {
		if err := runStatus(args, &bytes.Buffer{}); err == nil {
			t.Errorf("status %q: no error", args)
		}
	}
}

func TestStatusHelp(t *testing.T) {
	_, fs := newStatusFlags()
	if err := helpGroupsComplete(fs, statusFlagGroups); err != nil {
		t.Error(err)
	}
	var out bytes.Buffer
	if err := runStatus([]string{"--help"}, &out); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"tlsplane status policy NAMESPACE/NAME", "\n  --admin ADDR", "\n  -o string", portForwardHint} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("status --help lacks %q:\n%s", want, &out)
		}
	}
}
