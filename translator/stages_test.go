package translator_test

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	"github.com/tlsplane/tlsplane/manifests"
	"github.com/tlsplane/tlsplane/translator"
	"github.com/tlsplane/tlsplane/translator/backendtls"
	"github.com/tlsplane/tlsplane/translator/document"
	"github.com/tlsplane/tlsplane/translator/envoy"
	"github.com/tlsplane/tlsplane/translator/gateway"
	"github.com/tlsplane/tlsplane/translator/input"
	"github.com/tlsplane/tlsplane/translator/plan"
	"github.com/tlsplane/tlsplane/translator/upstream"
)

// The golden inputs again, one stage at a time, for a reader who wants to
// see the seam between judging and emitting: <case>.plan.yaml is what the
// judging packages decide (the plan), and <case>.envoy.yaml is what the
// emitter makes of that file, read back. `make golden` writes both.
const stagesDir = goldenDir + "/stages"

// planDocument is one input's plans.
type planDocument struct {
	Policies []policyPlan  `json:"policies"`
	Clusters []clusterPlan `json:"clusters"`
	Gateways []gatewayPlan `json:"gateways,omitempty"`
}

// policyPlan is a policy's verdict: the TLS it asks the emitter for, or
// why it has none.
type policyPlan struct {
	Name     string            `json:"name"`
	Accepted bool              `json:"accepted"`
	Reason   string            `json:"reason,omitempty"`
	TLS      *plan.UpstreamTLS `json:"tls,omitempty"`
	CABundle *plan.CABundle    `json:"caBundle,omitempty"`
	// ClientCert is printed without its key (plan.ClientCertificate's
	// rule), so the emit stage emits a secret without one.
	ClientCert *plan.ClientCertificate `json:"clientCertificate,omitempty"`
}

// clusterPlan is a Service port's cluster, the TLS it gets (the governing
// policy's, by name) and its endpoints.
type clusterPlan struct {
	plan.Cluster
	TLS      string      `json:"tls"`
	Policy   string      `json:"policy,omitempty"`
	Zones    []plan.Zone `json:"zones,omitempty"`
	Unserved string      `json:"unserved,omitempty"`
}

type gatewayPlan struct {
	Name      string           `json:"name"`
	Listeners []*plan.Listener `json:"listeners"`
}

var tlsNames = map[upstream.TLS]string{upstream.Plaintext: "plaintext", upstream.H2C: "h2c", upstream.FailClosed: "fail-closed", upstream.Governed: "governed", upstream.GovernedGRPC: "governed-grpc"}

// judgeStage runs the judging packages on in as the engine does, without
// emitting.
func judgeStage(in translator.Inputs, opts translator.Options) planDocument {
	ix := input.NewIndex(in)
	cfg := backendtls.Config{SystemCABundlePath: opts.SystemCABundlePath, AllowInsecureSkipVerify: opts.AllowInsecureSkipVerify, ControllerName: opts.ControllerName}
	memos := backendtls.Memos{}
	var doc planDocument
	var verdicts []*backendtls.Verdict
	for _, p := range translator.UniquePolicies(in.Policies) {
		v := backendtls.Judge(p, ix, cfg, memos)
		verdicts = append(verdicts, v)
		pp := policyPlan{Name: v.Name.String(), Accepted: v.Accepted(), Reason: string(v.RejectReason)}
		if v.Accepted() {
			pp.TLS, pp.CABundle, pp.ClientCert = &v.TLS, &v.Trust.Bundle.CABundle, v.ClientCert
		}
		doc.Policies = append(doc.Policies, pp)
	}
	_, winners := backendtls.Attach(verdicts, ix)
	sessions, budgetOf := translator.TrafficPlans(in)
	for _, nn := range input.SortedKeys(ix.Services) {
		svc := ix.Services[nn]
		var governors []*backendtls.Verdict
		for _, port := range svc.Spec.Ports {
			governors = append(governors, backendtls.Governing(winners, nn, port))
		}
		for _, p := range upstream.Ports(svc, nn, governors, ix.GRPCBackends, ix.StreamBackends, ix.DatagramBackends) {
			c, tls, unserved := p.Cluster(svc, nn)
			if p.Variant == upstream.Own || p.Variant == upstream.GRPC {
				c.RetryBudget = budgetOf(nn)
			}
			cp := clusterPlan{Cluster: c, TLS: tlsNames[tls], Unserved: unserved}
			if p.Governor != nil {
				cp.Policy = p.Governor.Name.String()
			}
			if c.ExternalName == "" && unserved == "" {
				cp.Zones = upstream.ReadyEndpoints(p.ServicePort, ix.SlicesByService[nn])
			}
			doc.Clusters = append(doc.Clusters, cp)
		}
	}
	res := gateway.Judge(in, ix, gateway.Config{ControllerName: opts.ControllerName, ListenerAddress: translator.DefaultListenerAddress}, metav1.NewTime(goldenNow))
	for _, gs := range res.Gateways {
		gp := gatewayPlan{Name: gs.Name().String(), Listeners: []*plan.Listener{}}
		for _, p := range gs.Ports(translator.DefaultListenerAddress) {
			for _, tb := range p.Tables {
				tb.Plan.Sessions = sessions
			}
			gp.Listeners = append(gp.Listeners, p.Plan)
		}
		doc.Gateways = append(doc.Gateways, gp)
	}
	return doc
}

// emitStage runs the emitter on the plans of doc: what each policy's TLS,
// each cluster, CA bundle, load assignment, listener and route table
// becomes, or what Envoy would refuse.
func emitStage(t *testing.T, doc planDocument) map[string][]any {
	parts := envoy.NewParts()
	out := map[string][]any{"clusters": {}, "secrets": {}, "endpoints": {}, "refused": {}}
	add := func(key string, m proto.Message) {
		v, err := document.ProtoValue(m)
		if err != nil {
			t.Fatal(err)
		}
		out[key] = append(out[key], v)
	}
	policies := map[string]envoy.ClusterTLS{}
	secrets := map[string]bool{}
	for _, p := range doc.Policies {
		if !p.Accepted {
			continue
		}
		tls, err := envoy.UpstreamTLS(*p.TLS, nil)
		if err != nil {
			out["refused"] = append(out["refused"], p.Name+": "+err.Error())
			continue
		}
		policies[p.Name] = tls
		if !p.TLS.Params.InsecureSkipVerify && !secrets[p.CABundle.SecretName] {
			secrets[p.CABundle.SecretName] = true
			add("secrets", envoy.CASecret(*p.CABundle))
		}
		if c := p.ClientCert; c != nil && !secrets[c.SecretName] {
			secrets[c.SecretName] = true
			add("secrets", envoy.CertificateSecret(c.SecretName, c.Chain, c.Key))
		}
	}
	for _, c := range doc.Clusters {
		if c.Unserved != "" {
			continue
		}
		var tls envoy.ClusterTLS
		switch c.TLS {
		case "h2c":
			tls = parts.H2C
		case "fail-closed":
			tls = parts.FailClosed
		case "governed":
			var ok bool
			if tls, ok = policies[c.Policy]; !ok {
				tls = parts.FailClosed // its TLS was refused
			}
		}
		cluster, err := envoy.Cluster(c.Cluster, tls, parts)
		if err != nil {
			out["refused"] = append(out["refused"], c.Name+": "+err.Error())
			continue
		}
		add("clusters", cluster)
		if c.ExternalName == "" {
			cla, err := envoy.LoadAssignment(c.Name, c.Zones)
			if err != nil {
				out["refused"] = append(out["refused"], c.Name+" endpoints: "+err.Error())
				continue
			}
			add("endpoints", cla)
		}
	}
	for _, g := range doc.Gateways {
		for _, l := range g.Listeners {
			listener, err := envoy.Listener(l)
			if err != nil {
				out["refused"] = append(out["refused"], l.Name+": "+err.Error())
				continue
			}
			add("listeners", listener)
			for _, table := range l.Tables() {
				rc := envoy.RouteConfig(table)
				if err := rc.ValidateAll(); err != nil {
					out["refused"] = append(out["refused"], rc.Name+": "+err.Error())
					continue
				}
				add("routes", rc)
			}
		}
	}
	return out
}

// TestGoldenPlans: each golden input, judged, against <case>.plan.yaml.
func TestGoldenPlans(t *testing.T) {
	forEachGoldenInput(t, func(t *testing.T, name, in string) {
		objects, err := manifests.Unadmitted.Read([]string{in}, func(string) {})
		if err != nil {
			t.Fatal(err)
		}
		got, err := document.Encode(judgeStage(objects, goldenOptions(t, in)), document.FormatYAML)
		if err != nil {
			t.Fatal(err)
		}
		compareGolden(t, filepath.Join(stagesDir, name+".plan.yaml"), got, "the plans of "+in)
	})
}

// TestGoldenEmit: each <case>.plan.yaml, read back and emitted, against
// <case>.envoy.yaml. It reads the plan file, not a fresh judgement, so it
// tests the emitter alone.
func TestGoldenEmit(t *testing.T) {
	forEachGoldenInput(t, func(t *testing.T, name, _ string) {
		raw, err := os.ReadFile(filepath.Join(stagesDir, name+".plan.yaml"))
		if err != nil {
			t.Fatalf("%v (run `make golden`)", err)
		}
		j, err := yaml.YAMLToJSON(raw)
		if err != nil {
			t.Fatal(err)
		}
		var doc planDocument
		dec := json.NewDecoder(bytes.NewReader(j))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&doc); err != nil {
			t.Fatalf("%s.plan.yaml: %v", name, err)
		}
		got, err := document.Encode(emitStage(t, doc), document.FormatYAML)
		if err != nil {
			t.Fatal(err)
		}
		compareGolden(t, filepath.Join(stagesDir, name+".envoy.yaml"), got, "the emission of "+name+".plan.yaml")
	})
	if *update {
		deleteStale(t, filepath.Join(stagesDir, "*.yaml"), func(out string) string {
			base := filepath.Base(out)
			base = strings.TrimSuffix(strings.TrimSuffix(base, ".plan.yaml"), ".envoy.yaml")
			return filepath.Join(goldenDir, base+".in.yaml")
		})
	}
}
