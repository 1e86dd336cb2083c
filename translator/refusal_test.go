package translator_test

import (
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/types"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/tlsplane/tlsplane/manifests"
	"github.com/tlsplane/tlsplane/snapshots"
	"github.com/tlsplane/tlsplane/translator"
	"github.com/tlsplane/tlsplane/translator/translatortest"
)

// collisionWorld is the case: in namespace client, the listener
// certificate Secret client and the policy's clientCertificateRef
// certificate are one SDS name, client/client/certificate.
const collisionWorld = `apiVersion: gateway.networking.k8s.io/v1
kind: GatewayClass
metadata: {name: tlsplane, generation: 1}
spec: {controllerName: tlsplane.io/controller}
---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: edge, namespace: client, generation: 1}
spec:
  gatewayClassName: tlsplane
  addresses: [{value: 192.0.2.40}]
  listeners:
  - {name: https, protocol: HTTPS, port: 443, tls: {certificateRefs: [{name: client}]}}
---
apiVersion: v1
kind: Service
metadata: {name: pay, namespace: client}
spec: {ports: [{name: https, port: 443}]}
---
apiVersion: gateway.networking.k8s.io/v1
kind: BackendTLSPolicy
metadata: {name: pay, namespace: client, generation: 1, creationTimestamp: "2026-01-01T00:00:00Z"}
spec:
  targetRefs: [{group: "", kind: Service, name: pay}]
  validation: {hostname: pay.example, wellKnownCACertificates: System}
  options: {tlsplane.io/clientCertificateRef: certificate}
`

func collisionInputs(t *testing.T) translator.Inputs {
	in, err := manifests.Parse("collision.yaml", []byte(collisionWorld), nil)
	if err != nil {
		t.Fatal(err)
	}
	in.Secrets = append(in.Secrets, translatortest.TLSSecret(t, "client", "client", "b.example"),
		translatortest.TLSSecret(t, "client", "certificate", "b-client"))
	return in
}

// TestSecretNameConflictIsOnTheGateway: the translator judges the
// collision: the Gateway is Programmed=False naming the SDS secret and the
// policy, from Translate and from an Update alike, and is Programmed again
// once the policy no longer reads the secret.
func TestSecretNameConflictIsOnTheGateway(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	gw := types.NamespacedName{Namespace: "client", Name: "edge"}
	in := collisionInputs(t)
	programmed := func(out translator.Output) (bool, string) {
		c := meta.FindStatusCondition(out.GatewayAPI.Gateways[gw].Conditions, string(gwv1.GatewayConditionProgrammed))
		if c == nil {
			t.Fatal("Gateway client/edge has no Programmed condition")
		}
		return c.Status == "True", c.Reason + ": " + c.Message
	}
	out := translator.Translate(in, nil, now, translator.Options{})
	if ok, msg := programmed(out); ok || !strings.Contains(msg, translator.ReasonSecretNameConflict) ||
		!strings.Contains(msg, `"client/client/certificate"`) || !strings.Contains(msg, "BackendTLSPolicy client/pay") {
		t.Fatalf("Translate: Programmed %v %q, want False naming the secret and the policy", ok, msg)
	}

	tr := translator.New()
	tr.Translate(in, nil, now, translator.Options{})
	fixed := in.Policies[0].DeepCopy()
	fixed.Spec.Options = nil
	got, ok := tr.Update([]translator.Change{{Kind: translator.KindBackendTLSPolicy, Key: types.NamespacedName{Namespace: "client", Name: "pay"}, Object: fixed}}, nil, now, translator.Options{})
	if !ok {
		t.Fatal("Update refused")
	}
	if ok, msg := programmed(got); !ok {
		t.Fatalf("Update without the option: Programmed False %q, want True", msg)
	}
	got, _ = tr.Update([]translator.Change{{Kind: translator.KindBackendTLSPolicy, Key: types.NamespacedName{Namespace: "client", Name: "pay"}, Object: in.Policies[0]}}, nil, now, translator.Options{})
	if ok, msg := programmed(got); ok || !strings.Contains(msg, translator.ReasonSecretNameConflict) {
		t.Fatalf("Update with the option again: Programmed %v %q, want False (%s)", ok, msg, translator.ReasonSecretNameConflict)
	}
	pol := got.Statuses[types.NamespacedName{Namespace: "client", Name: "pay"}]
	if len(pol.Ancestors) == 0 {
		t.Fatal("policy client/pay has no ancestor status")
	}
	for _, a := range pol.Ancestors {
		c := meta.FindStatusCondition(a.Conditions, translator.ConditionConflicted)
		if c == nil || c.Status != "True" || !strings.Contains(c.Message, "Gateway client/edge is refused") {
			t.Errorf("policy client/pay ancestor %s: %s = %+v, want True naming Gateway client/edge", a.AncestorRef.Name, translator.ConditionConflicted, c)
		}
		if acc := meta.FindStatusCondition(a.Conditions, "Accepted"); acc == nil || acc.Status != "True" {
			t.Errorf("policy client/pay: Accepted = %+v, want True: its clusters are served", acc)
		}
	}
	// The publisher refuses the fleet alone, and is ready.
	p := snapshots.New(snapshots.Options{})
	if _, err := p.Publish(got); err != nil || !p.Ready() {
		t.Fatalf("Publish: %v, ready %v", err, p.Ready())
	}
	if r := p.Refusals(); len(r) != 1 || r[0].Fleet != "client/edge" {
		t.Fatalf("refusals %v, want fleet client/edge", r)
	}
}
