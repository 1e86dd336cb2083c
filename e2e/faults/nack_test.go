package faults

import (
	"encoding/json"
	"path/filepath"
	"testing"
	"time"

	"github.com/tlsplane/tlsplane/e2e/harness"
)

// badAddress is an endpoint address tlsplane passes on as it is (it does
// not parse EndpointSlice addresses) and Envoy rejects as a malformed IP.
// An SNI over 255 bytes no longer works: tlsplane runs Envoy's proto
// validation and marks such a policy Invalid itself.
const badAddress = "999.0.0.1"

// withAddress is objs with the EndpointSlice's address replaced.
func withAddress(objs []object, address string) []object {
	for _, o := range objs {
		if o["kind"] == "EndpointSlice" {
			o["endpoints"] = []object{{"addresses": []string{address}, "conditions": object{"ready": true}}}
		}
	}
	return objs
}

// debugStatus is the part of tlsplane's /debug/status this test reads.
type debugStatus struct {
	Policies []struct {
		Namespace string          `json:"namespace"`
		Name      string          `json:"name"`
		Status    json.RawMessage `json:"status"`
	} `json:"policies"`
	Rejections []struct {
		TypeURL  string `json:"typeURL"`
		Message  string `json:"message"`
		Policies []struct {
			Namespace string `json:"Namespace"`
			Name      string `json:"Name"`
		} `json:"policies"`
	} `json:"rejections"`
}

// A cluster whose endpoints Envoy rejects although tlsplane's checks pass: no resend
// loop, the other clusters keep updating, and the NACK is reported, with
// SotW and with delta ADS (two servers in tlsplane).
func TestClusterEnvoyRejects(t *testing.T) {
	for _, apiType := range []string{"GRPC", "DELTA_GRPC"} {
		t.Run(apiType, func(t *testing.T) { clusterEnvoyRejects(t, apiType) })
	}
}

func clusterEnvoyRejects(t *testing.T, apiType string) {
	e := newEnv(t, "")
	e.apiType = apiType
	steadyPort, rejectedPort := e.startBackend(t, "steady"), e.startBackend(t, "rejected")
	steadyFile, rejectedFile := filepath.Join(e.manifestDir, "steady.yaml"), filepath.Join(e.manifestDir, "rejected.yaml")
	harness.WriteAtomic(t, steadyFile, manifest(t, backendObjects("steady", steadyPort, e.pki.caPEM, hostMain)))
	harness.WriteAtomic(t, rejectedFile, manifest(t, backendObjects("rejected", rejectedPort, e.pki.caPEM, hostMain)))
	e.startTLSPlane(t)
	e.startEnvoy(t)
	steady, rejected := clusterName("steady"), clusterName("rejected")
	e.waitServed(t, steady, "steady", hostMain)
	e.waitServed(t, rejected, "rejected", hostMain)

	harness.WriteAtomic(t, rejectedFile, manifest(t, withAddress(backendObjects("rejected", rejectedPort, e.pki.caPEM, hostMain), badAddress)))
	err := harness.Eventually(applyTimeout, 100*time.Millisecond, func() error {
		if e.metric(t, "tlsplane_xds_nacks_total", edsType) == 0 {
			return errString("no EDS NACK counted yet")
		}
		return nil
	})
	if err != nil {
		body, _ := harness.HTTPGet(e.tlsplaneURL("/debug/status"))
		t.Fatalf("Envoy did not NACK the endpoint %s: %v\n--- /debug/status:\n%s\n--- tlsplane log:\n%s", badAddress, err, body, e.tlsplane.LogTail(20))
	}

	// No resend loop: the rejected version is not sent again.
	time.Sleep(500 * time.Millisecond)
	edsSent := e.metric(t, "tlsplane_xds_responses_total", edsType)
	rejectedBefore := e.envoyStats(t)["cluster."+rejected+".update_rejected"]
	time.Sleep(2 * time.Second)
	if now := e.metric(t, "tlsplane_xds_responses_total", edsType); now != edsSent {
		t.Errorf("EDS responses went from %v to %v with nothing changed: a resend loop", edsSent, now)
	}
	if now := e.envoyStats(t)["cluster."+rejected+".update_rejected"]; now != rejectedBefore || now == 0 {
		t.Errorf("Envoy's cluster.%s.update_rejected went from %d to %d", rejected, rejectedBefore, now)
	}
	// Envoy keeps the rejected cluster's last good endpoints.
	if got, err := e.request(rejected); err != nil || got.Name != "rejected" {
		t.Errorf("the rejected cluster: %+v, %v; want its last good endpoint", got, err)
	}

	// The NACK is on /debug/status, attributed to the policy.
	body, err := harness.HTTPGet(e.tlsplaneURL("/debug/status"))
	if err != nil {
		t.Fatal(err)
	}
	var status debugStatus
	if err := json.Unmarshal(body, &status); err != nil {
		t.Fatalf("/debug/status: %v\n%s", err, body)
	}
	attributed := false
	for _, r := range status.Rejections {
		for _, p := range r.Policies {
			if p.Namespace == ns && p.Name == "rejected-tls" {
				attributed = true
			}
			if p.Name == "steady-tls" {
				t.Errorf("the NACK is attributed to steady-tls too: %+v", r)
			}
		}
	}
	if !attributed {
		t.Errorf("/debug/status does not attribute the NACK to %s/rejected-tls:\n%s", ns, body)
	}
	// And on the policy's own status.
	if got := dataPlaneAccepted(t, status, "rejected-tls"); got != "False" {
		t.Errorf("rejected-tls: %s = %q, want False\n%s", dataPlaneCondition, got, body)
	}
	if got := dataPlaneAccepted(t, status, "steady-tls"); got == "False" {
		t.Errorf("steady-tls: %s = False, but its resources were not rejected", dataPlaneCondition)
	}

	// Other clusters keep updating while one is rejected.
	harness.WriteAtomic(t, steadyFile, manifest(t, backendObjects("steady", steadyPort, e.pki.caPEM, hostOther)))
	e.waitServed(t, steady, "steady", hostOther)

	// Fixing the policy ends the rejection, on its status too.
	harness.WriteAtomic(t, rejectedFile, manifest(t, backendObjects("rejected", rejectedPort, e.pki.caPEM, hostOther)))
	e.waitServed(t, rejected, "rejected", hostOther)
	err = harness.Eventually(applyTimeout, 200*time.Millisecond, func() error {
		body, err := harness.HTTPGet(e.tlsplaneURL("/debug/status"))
		if err != nil {
			return err
		}
		var now debugStatus
		if err := json.Unmarshal(body, &now); err != nil {
			return err
		}
		if got := dataPlaneAccepted(t, now, "rejected-tls"); got == "False" {
			return errString(dataPlaneCondition + " still False")
		}
		return nil
	})
	if err != nil {
		t.Errorf("rejected-tls after the fix: %v", err)
	}
	t.Logf("NACKs counted: %v; /debug/status rejections: %d", e.metric(t, "tlsplane_xds_nacks_total"), len(status.Rejections))
}

// dataPlaneCondition is the condition tlsplane sets on a policy whose
// resources a fleet rejected.
const dataPlaneCondition = "tlsplane.io/DataPlaneAccepted"

// dataPlaneAccepted is the status of dataPlaneCondition on the policy's
// ancestors ("" when absent; "False" if any ancestor has it False).
func dataPlaneAccepted(t *testing.T, s debugStatus, policy string) string {
	t.Helper()
	got := ""
	for _, p := range s.Policies {
		if p.Namespace != ns || p.Name != policy {
			continue
		}
		var st struct {
			Ancestors []struct {
				Conditions []struct {
					Type   string `json:"type"`
					Status string `json:"status"`
				} `json:"conditions"`
			} `json:"ancestors"`
		}
		if err := json.Unmarshal(p.Status, &st); err != nil {
			t.Fatalf("status of %s: %v", policy, err)
		}
		for _, a := range st.Ancestors {
			for _, c := range a.Conditions {
				if c.Type == dataPlaneCondition && got != "False" {
					got = c.Status
				}
			}
		}
	}
	return got
}

const edsType = `type_url="type.googleapis.com/envoy.config.endpoint.v3.ClusterLoadAssignment"`

type errString string

func (e errString) Error() string { return string(e) }
