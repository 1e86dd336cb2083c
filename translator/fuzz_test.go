package translator_test

import (
	"maps"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	clusterv3 "github.com/envoyproxy/go-control-plane/envoy/config/cluster/v3"
	endpointv3 "github.com/envoyproxy/go-control-plane/envoy/config/endpoint/v3"
	tlsv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/transport_sockets/tls/v3"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/anypb"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation/field"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/tlsplane/tlsplane/manifests"
	"github.com/tlsplane/tlsplane/translator"
)

// fuzzCase is one FuzzTranslate input. Besides a manifest (the golden
// inputs are the seeds), it describes one more policy, Service,
// EndpointSlice and CA object in small line languages, so that the fuzzer
// mutates fields rather than YAML syntax:
//
//	targets   one targetRef a line: name[|section[|kind[|group]]]; an empty
//	          section is none, kind defaults to Service
//	caRefs    one caCertificateRef a line: name[|kind[|group]], kind
//	          defaults to ConfigMap; the CA object is named after the first
//	sans      one subjectAltName a line: type|value (H: Hostname, U: URI,
//	          anything else is taken as the type), or a bare hostname
//	options   one spec.options entry a line: key=value, `\n` in value is a
//	          newline
//	service   first line name|type|externalName, then one port a line:
//	          name|port|protocol
//	slice     first line the addressType (IPv4 when empty), then lines
//	          p|name|port|protocol (a port) or e|addr,addr|ready|zone (an
//	          endpoint; ready t, f or unset)
//	flags     bits below; bits 32 and up seed the shuffles
type fuzzCase struct {
	manifest, caData                                         []byte
	hostname, sans, options, targets, caRefs, service, slice string
	flags                                                    uint64
}

const (
	flagCAInSecret     = 1 << iota // the CA object is a Secret, not a ConfigMap
	flagBinaryData                 // a ConfigMap's CA is in binaryData
	flagWellKnown                  // wellKnownCACertificates: System
	flagWellKnownOther             // wellKnownCACertificates: a value from caData
	flagAllowInsecure              // Options.AllowInsecureSkipVerify
	flagDefaultNS                  // the fuzzed objects live in default, not shop
	flagOtherKey                   // the CA is under ca.pem, not ca.crt
	flagNoPolicy                   // no fuzzed policy
	flagOlder                      // the fuzzed policy is older than the manifest's
	flagNoSliceLabel               // the slice has no kubernetes.io/service-name
	flagOtherStatus                // the fuzzed policy carries another controller's status
	flagUIDs                       // the fuzzed objects have a UID and resourceVersion, as from the API server
)

// fuzzNow is the clock of every fuzzed translation.
var fuzzNow = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// FuzzTranslate checks, for arbitrary objects: no panic; every resource
// passes ValidateAll (the packed TLS contexts and HTTP options included),
// names are unique and sorted, and an EDS cluster's assignment and an SDS
// secret a cluster references are there; every policy has a status with
// valid conditions; a Service port any policy targets is never served
// plaintext, and skips certificate validation only under an accepted
// policy; and the same objects in another order, translated again by a
// Translator that remembers the last call, give equal output.
func FuzzTranslate(f *testing.F) {
	seeds := append(fuzzSeeds(f), malformedServiceSeeds(f)...)
	fuzzCA = fuzzGoldenCA(f)
	for _, c := range seeds {
		f.Add(c.manifest, c.caData, c.hostname, c.sans, c.options, c.targets, c.caRefs, c.service, c.slice, c.flags)
	}
	f.Fuzz(func(t *testing.T, manifest, caData []byte, hostname, sans, options, targets, caRefs, service, slice string, flags uint64) {
		c := fuzzCase{manifest, caData, hostname, sans, options, targets, caRefs, service, slice, flags}
		in := c.inputs()
		opts := translator.Options{AllowInsecureSkipVerify: flags&flagAllowInsecure != 0}
		out := translator.Translate(in, nil, fuzzNow, opts)
		fuzzCheckOutput(t, in, out)

		// A Translator that remembers: the same objects fuzzShuffled, twice
		// (the second call is served from its caches).
		tr := translator.New()
		for i := uint64(0); i < 2; i++ {
			again := tr.Translate(fuzzShuffled(in, flags>>32+i), nil, fuzzNow, opts)
			if diff := fuzzOutputDifference(out, again); diff != "" {
				t.Fatalf("translation %d of the shuffled inputs differs: %s", i+2, diff)
			}
		}

		// A Translator that saw other objects before: the CA edited, then
		// the first policy deleted. Each result must be a fresh one's.
		edited, deleted := c.editedCA(in), in
		if len(in.Policies) > 0 {
			deleted.Policies = in.Policies[1:]
		}
		tr = translator.New()
		for i, step := range []translator.Inputs{edited, in, deleted, in} {
			got := tr.Translate(step, nil, fuzzNow, opts)
			if diff := fuzzOutputDifference(translator.Translate(step, nil, fuzzNow, opts), got); diff != "" {
				t.Fatalf("step %d after other objects: a Translator's output differs from Translate's: %s", i+1, diff)
			}
		}
	})
}

// fuzzCA is the golden CA certificate, set before fuzzing starts.
var fuzzCA []byte

// editedCA is in with the fuzzed CA object replaced by one with other
// content (a new resourceVersion when it has a UID): valid becomes empty,
// anything else the golden CA.
func (c fuzzCase) editedCA(in translator.Inputs) translator.Inputs {
	data := fuzzCA
	if len(c.caData) > 0 {
		data = nil
	}
	out := in
	out.ConfigMaps = slices.Clone(in.ConfigMaps)
	for i, cm := range out.ConfigMaps {
		if cm.Annotations["fuzz"] == "ca" {
			cm = cm.DeepCopy()
			for k := range cm.Data {
				cm.Data[k] = string(data)
			}
			for k := range cm.BinaryData {
				cm.BinaryData[k] = data
			}
			cm.ResourceVersion += "0"
			out.ConfigMaps[i] = cm
		}
	}
	out.Secrets = slices.Clone(in.Secrets)
	for i, s := range out.Secrets {
		if s.Annotations["fuzz"] == "ca" {
			s = s.DeepCopy()
			for k := range s.Data {
				s.Data[k] = data
			}
			s.ResourceVersion += "0"
			out.Secrets[i] = s
		}
	}
	return out
}

// malformedServiceSeeds are Services the API server refuses and a manifest
// file may hold: ExternalName without spec.externalName (targeted and not),
// and two TCP ports of one number, only one of them targeted.
func malformedServiceSeeds(tb testing.TB) []fuzzCase {
	return []fuzzCase{{
		caData: fuzzGoldenCA(tb), hostname: "pay.shop.example", targets: "pay", caRefs: "pay-ca",
		service: "pay|ExternalName|\nhttps|443|",
	}, {
		service: "plain|ExternalName|\nhttp|80|", flags: flagNoPolicy,
	}, {
		caData: fuzzGoldenCA(tb), hostname: "pay.shop.example", targets: "pay|https", caRefs: "pay-ca",
		service: "pay||\nhttps|443|\nplain|443|",
	}, {
		caData: fuzzGoldenCA(tb), hostname: "pay.shop.example", targets: "pay|https", caRefs: "pay-ca",
		service: "pay||\nplain|443|\nhttps|443|",
	}}
}

// inputs are the manifest's objects and the fuzzed ones, made a set by
// name as every source does (the first of two with one name is kept).
func (c fuzzCase) inputs() translator.Inputs {
	parsed, err := manifests.Parse("fuzz.yaml", c.manifest, nil)
	if err != nil {
		parsed = translator.Inputs{}
	}
	var extra translator.Inputs
	ns := "shop"
	if c.flags&flagDefaultNS != 0 {
		ns = "default"
	}
	svcName := c.addService(&extra, ns)
	if c.flags&flagNoPolicy == 0 {
		c.addPolicy(&extra, ns)
	}
	c.addCA(&extra, ns)
	c.addSlice(&extra, ns, svcName)
	if c.flags&flagUIDs != 0 {
		var objects []metav1.Object
		for _, o := range extra.Policies {
			objects = append(objects, o)
		}
		for _, o := range extra.Services {
			objects = append(objects, o)
		}
		for _, o := range extra.EndpointSlices {
			objects = append(objects, o)
		}
		for _, o := range extra.ConfigMaps {
			objects = append(objects, o)
		}
		for _, o := range extra.Secrets {
			objects = append(objects, o)
		}
		for i, o := range objects {
			o.SetUID(types.UID("fuzz-" + strconv.Itoa(i)))
			o.SetResourceVersion("1")
		}
	}
	return manifests.Merge([]manifests.Part{{Source: "fuzz", Inputs: extra}, {Source: "fuzz.yaml", Inputs: parsed}}, nil)
}

func (c fuzzCase) addPolicy(in *translator.Inputs, ns string) {
	p := &gwv1.BackendTLSPolicy{
		ObjectMeta: metav1.ObjectMeta{
			Name: "fuzz-policy", Namespace: ns, Generation: 1,
			CreationTimestamp: metav1.NewTime(fuzzNow.Add(-time.Hour)),
		},
		Spec: gwv1.BackendTLSPolicySpec{Validation: gwv1.BackendTLSPolicyValidation{Hostname: gwv1.PreciseHostname(c.hostname)}},
	}
	if c.flags&flagOlder != 0 {
		p.CreationTimestamp = metav1.NewTime(time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC))
	}
	for _, l := range fuzzLines(c.targets) {
		f := strings.Split(l, "|")
		ref := gwv1.LocalPolicyTargetReferenceWithSectionName{LocalPolicyTargetReference: gwv1.LocalPolicyTargetReference{
			Kind: "Service", Name: gwv1.ObjectName(f[0]),
		}}
		if len(f) > 1 && f[1] != "" {
			s := gwv1.SectionName(f[1])
			ref.SectionName = &s
		}
		if len(f) > 2 {
			ref.Kind = gwv1.Kind(f[2])
		}
		if len(f) > 3 {
			ref.Group = gwv1.Group(f[3])
		}
		p.Spec.TargetRefs = append(p.Spec.TargetRefs, ref)
	}
	for _, l := range fuzzLines(c.caRefs) {
		f := strings.Split(l, "|")
		ref := gwv1.LocalObjectReference{Kind: "ConfigMap", Name: gwv1.ObjectName(f[0])}
		if len(f) > 1 {
			ref.Kind = gwv1.Kind(f[1])
		}
		if len(f) > 2 {
			ref.Group = gwv1.Group(f[2])
		}
		p.Spec.Validation.CACertificateRefs = append(p.Spec.Validation.CACertificateRefs, ref)
	}
	switch {
	case c.flags&flagWellKnown != 0:
		wk := gwv1.WellKnownCACertificatesSystem
		p.Spec.Validation.WellKnownCACertificates = &wk
	case c.flags&flagWellKnownOther != 0:
		wk := gwv1.WellKnownCACertificatesType(c.caData)
		p.Spec.Validation.WellKnownCACertificates = &wk
	}
	for _, l := range fuzzLines(c.sans) {
		typ, value, ok := strings.Cut(l, "|")
		if !ok {
			typ, value = "H", l
		}
		san := gwv1.SubjectAltName{}
		switch typ {
		case "H":
			san.Type, san.Hostname = gwv1.HostnameSubjectAltNameType, gwv1.Hostname(value)
		case "U":
			san.Type, san.URI = gwv1.URISubjectAltNameType, gwv1.AbsoluteURI(value)
		default:
			san.Type, san.Hostname, san.URI = gwv1.SubjectAltNameType(typ), gwv1.Hostname(value), gwv1.AbsoluteURI(value)
		}
		p.Spec.Validation.SubjectAltNames = append(p.Spec.Validation.SubjectAltNames, san)
	}
	for _, l := range fuzzLines(c.options) {
		k, v, _ := strings.Cut(l, "=")
		if p.Spec.Options == nil {
			p.Spec.Options = map[gwv1.AnnotationKey]gwv1.AnnotationValue{}
		}
		p.Spec.Options[gwv1.AnnotationKey(k)] = gwv1.AnnotationValue(strings.ReplaceAll(v, `\n`, "\n"))
	}
	if c.flags&flagOtherStatus != 0 {
		group, kind := gwv1.Group(""), gwv1.Kind("Service")
		p.Status.Ancestors = append(p.Status.Ancestors, gwv1.PolicyAncestorStatus{
			AncestorRef:    gwv1.ParentReference{Group: &group, Kind: &kind, Name: gwv1.ObjectName(c.hostname)},
			ControllerName: "example.com/other",
			Conditions: []metav1.Condition{{
				Type: "Accepted", Status: metav1.ConditionTrue, Reason: "Accepted",
				LastTransitionTime: metav1.NewTime(fuzzNow.Add(-time.Minute)),
			}},
		})
	}
	in.Policies = append(in.Policies, p)
}

// addCA adds the CA object the first caRef names (fuzz-ca without refs).
func (c fuzzCase) addCA(in *translator.Inputs, ns string) {
	name := "fuzz-ca"
	if l := fuzzLines(c.caRefs); len(l) > 0 {
		name, _, _ = strings.Cut(l[0], "|")
	}
	key := "ca.crt"
	if c.flags&flagOtherKey != 0 {
		key = "ca.pem"
	}
	meta := metav1.ObjectMeta{Name: name, Namespace: ns, Annotations: map[string]string{"fuzz": "ca"}}
	switch {
	case c.flags&flagCAInSecret != 0:
		in.Secrets = append(in.Secrets, &corev1.Secret{ObjectMeta: meta, Data: map[string][]byte{key: c.caData}})
	case c.flags&flagBinaryData != 0:
		in.ConfigMaps = append(in.ConfigMaps, &corev1.ConfigMap{ObjectMeta: meta, BinaryData: map[string][]byte{key: c.caData}})
	default:
		in.ConfigMaps = append(in.ConfigMaps, &corev1.ConfigMap{ObjectMeta: meta, Data: map[string]string{key: string(c.caData)}})
	}
}

// addService adds the fuzzed Service and returns its name.
func (c fuzzCase) addService(in *translator.Inputs, ns string) string {
	ls := fuzzLines(c.service)
	if len(ls) == 0 {
		return ""
	}
	head := strings.Split(ls[0], "|")
	svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: head[0], Namespace: ns}}
	if len(head) > 1 {
		svc.Spec.Type = corev1.ServiceType(head[1])
	}
	if len(head) > 2 {
		svc.Spec.ExternalName = head[2]
	}
	for _, l := range ls[1:] {
		f := strings.Split(l, "|")
		port := corev1.ServicePort{Name: f[0]}
		if len(f) > 1 {
			port.Port = fuzzInt32(f[1])
		}
		if len(f) > 2 {
			port.Protocol = corev1.Protocol(f[2])
		}
		svc.Spec.Ports = append(svc.Spec.Ports, port)
	}
	in.Services = append(in.Services, svc)
	return head[0]
}

func (c fuzzCase) addSlice(in *translator.Inputs, ns, service string) {
	ls := fuzzLines(c.slice)
	if len(ls) == 0 {
		return
	}
	es := &discoveryv1.EndpointSlice{
		ObjectMeta:  metav1.ObjectMeta{Name: "fuzz-slice", Namespace: ns, Labels: map[string]string{discoveryv1.LabelServiceName: service}},
		AddressType: discoveryv1.AddressType(ls[0]),
	}
	if ls[0] == "" {
		es.AddressType = discoveryv1.AddressTypeIPv4
	}
	if c.flags&flagNoSliceLabel != 0 {
		es.Labels = nil
	}
	for _, l := range ls[1:] {
		f := strings.Split(l, "|")
		for len(f) < 4 {
			f = append(f, "")
		}
		switch f[0] {
		case "p":
			name, port, proto := f[1], fuzzInt32(f[2]), corev1.Protocol(f[3])
			p := discoveryv1.EndpointPort{Name: &name, Port: &port}
			if proto != "" {
				p.Protocol = &proto
			}
			es.Ports = append(es.Ports, p)
		case "e":
			ep := discoveryv1.Endpoint{Addresses: strings.Split(f[1], ",")}
			switch f[2] {
			case "t":
				ep.Conditions.Ready = new(true)
			case "f":
				ep.Conditions.Ready = new(false)
			}
			if f[3] != "" {
				zone := f[3]
				ep.Zone = &zone
			}
			es.Endpoints = append(es.Endpoints, ep)
		}
	}
	in.EndpointSlices = append(in.EndpointSlices, es)
}

func fuzzLines(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(s, "\n")
}

// fuzzInt32 parses a number, wrapping what does not fit, so that negative,
// zero and out-of-range ports all occur.
func fuzzInt32(s string) int32 {
	n, _ := strconv.ParseInt(s, 10, 64)
	return int32(n)
}

// fuzzShuffled is in with every slice in another order (the objects shared).
func fuzzShuffled(in translator.Inputs, seed uint64) translator.Inputs {
	r := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	out := translator.Inputs{
		Policies:       slices.Clone(in.Policies),
		Services:       slices.Clone(in.Services),
		EndpointSlices: slices.Clone(in.EndpointSlices),
		ConfigMaps:     slices.Clone(in.ConfigMaps),
		Secrets:        slices.Clone(in.Secrets),
	}
	r.Shuffle(len(out.Policies), func(i, j int) { out.Policies[i], out.Policies[j] = out.Policies[j], out.Policies[i] })
	r.Shuffle(len(out.Services), func(i, j int) { out.Services[i], out.Services[j] = out.Services[j], out.Services[i] })
	r.Shuffle(len(out.EndpointSlices), func(i, j int) {
		out.EndpointSlices[i], out.EndpointSlices[j] = out.EndpointSlices[j], out.EndpointSlices[i]
	})
	r.Shuffle(len(out.ConfigMaps), func(i, j int) { out.ConfigMaps[i], out.ConfigMaps[j] = out.ConfigMaps[j], out.ConfigMaps[i] })
	r.Shuffle(len(out.Secrets), func(i, j int) { out.Secrets[i], out.Secrets[j] = out.Secrets[j], out.Secrets[i] })
	out.GatewayClasses = fuzzShuffle(r, in.GatewayClasses)
	out.Gateways = fuzzShuffle(r, in.Gateways)
	out.HTTPRoutes = fuzzShuffle(r, in.HTTPRoutes)
	out.GRPCRoutes = fuzzShuffle(r, in.GRPCRoutes)
	out.TLSRoutes = fuzzShuffle(r, in.TLSRoutes)
	out.TCPRoutes = fuzzShuffle(r, in.TCPRoutes)
	out.ListenerSets = fuzzShuffle(r, in.ListenerSets)
	out.UDPRoutes = fuzzShuffle(r, in.UDPRoutes)
	out.ReferenceGrants = fuzzShuffle(r, in.ReferenceGrants)
	out.Namespaces = fuzzShuffle(r, in.Namespaces)
	out.XBackends = fuzzShuffle(r, in.XBackends)
	out.XBackendTrafficPolicies = fuzzShuffle(r, in.XBackendTrafficPolicies)
	out.XMeshes = fuzzShuffle(r, in.XMeshes)
	return out
}

// fuzzShuffle is a shuffled copy of s.
func fuzzShuffle[T any](r *rand.Rand, s []T) []T {
	out := slices.Clone(s)
	r.Shuffle(len(out), func(i, j int) { out[i], out[j] = out[j], out[i] })
	return out
}

// fuzzOutputDifference says how two outputs differ, "" when they are equal.
func fuzzOutputDifference(a, b translator.Output) string {
	switch {
	case !fuzzProtoListsEqual(a.Clusters, b.Clusters):
		return "clusters"
	case !fuzzProtoListsEqual(a.Endpoints, b.Endpoints):
		return "endpoints"
	case !fuzzProtoListsEqual(a.Secrets, b.Secrets):
		return "secrets"
	case !reflect.DeepEqual(a.Statuses, b.Statuses):
		return "statuses"
	case !reflect.DeepEqual(a.Origins, b.Origins):
		return "origins"
	case !reflect.DeepEqual(a.XBackendOrigins, b.XBackendOrigins):
		return "XBackend origins"
	case !slices.Equal(a.Warnings, b.Warnings):
		return "warnings: " + strings.Join(a.Warnings, "; ") + " vs " + strings.Join(b.Warnings, "; ")
	case !fuzzFleetsEqual(a.Fleets, b.Fleets):
		return "Gateway fleets"
	case !reflect.DeepEqual(a.GatewayAPI, b.GatewayAPI):
		return "Gateway API statuses: " + gatewayAPIDifference(a.GatewayAPI, b.GatewayAPI)
	}
	return ""
}

// gatewayAPIDifference names the kinds whose statuses differ.
func gatewayAPIDifference(a, b translator.GatewayAPIStatuses) string {
	var kinds []string
	for kind, equal := range map[string]bool{
		"GatewayClasses": reflect.DeepEqual(a.GatewayClasses, b.GatewayClasses),
		"Gateways":       reflect.DeepEqual(a.Gateways, b.Gateways),
		"HTTPRoutes":     reflect.DeepEqual(a.HTTPRoutes, b.HTTPRoutes),
		"GRPCRoutes":     reflect.DeepEqual(a.GRPCRoutes, b.GRPCRoutes),
		"TLSRoutes":      reflect.DeepEqual(a.TLSRoutes, b.TLSRoutes),
		"XBackends":      reflect.DeepEqual(a.XBackends, b.XBackends),
		"TCPRoutes":      reflect.DeepEqual(a.TCPRoutes, b.TCPRoutes),
		"ListenerSets":   reflect.DeepEqual(a.ListenerSets, b.ListenerSets),
		"UDPRoutes":      reflect.DeepEqual(a.UDPRoutes, b.UDPRoutes),
		"XMeshes":        reflect.DeepEqual(a.XMeshes, b.XMeshes),
	} {
		if !equal {
			kinds = append(kinds, kind)
		}
	}
	slices.Sort(kinds)
	return strings.Join(kinds, ", ")
}

func fuzzFleetsEqual(a, b map[string]*translator.FleetResources) bool {
	return maps.EqualFunc(a, b, func(x, y *translator.FleetResources) bool {
		return fuzzProtoListsEqual(x.Listeners, y.Listeners) && fuzzProtoListsEqual(x.Routes, y.Routes) &&
			fuzzProtoListsEqual(x.Secrets, y.Secrets) && fuzzProtoListsEqual(x.Clusters, y.Clusters) &&
			slices.Equal(x.Reached, y.Reached)
	})
}

func fuzzProtoListsEqual[M proto.Message](a, b []M) bool {
	return slices.EqualFunc(a, b, func(x, y M) bool { return proto.Equal(x, y) })
}

// fuzzValidator is every generated Envoy message.
type fuzzValidator interface{ ValidateAll() error }

// fuzzCheckOutput checks out against in with no help from the translator's
// internals: what a port's cluster does is read from its transport socket.
func fuzzCheckOutput(t *testing.T, in translator.Inputs, out translator.Output) {
	t.Helper()
	secrets := map[string]bool{}
	for _, s := range out.Secrets {
		if err := s.ValidateAll(); err != nil {
			t.Errorf("secret %q: %v", s.Name, err)
		}
		if secrets[s.Name] {
			t.Errorf("secret %q is in the output twice", s.Name)
		}
		secrets[s.Name] = true
	}
	endpoints := map[string]bool{}
	for _, e := range out.Endpoints {
		if err := e.ValidateAll(); err != nil {
			t.Errorf("load assignment %q: %v", e.ClusterName, err)
		}
		if endpoints[e.ClusterName] {
			t.Errorf("load assignment %q is in the output twice", e.ClusterName)
		}
		endpoints[e.ClusterName] = true
	}
	clusters := map[string][]*fuzzClusterTLS{}
	for _, c := range out.Clusters {
		clusters[c.Name] = append(clusters[c.Name], fuzzCheckCluster(t, c, secrets, endpoints))
	}
	for name, cs := range clusters {
		if len(cs) > 1 {
			t.Errorf("cluster %q is in the output %d times", name, len(cs))
		}
	}
	if !slices.IsSortedFunc(out.Clusters, func(a, b *clusterv3.Cluster) int { return strings.Compare(a.Name, b.Name) }) ||
		!slices.IsSortedFunc(out.Endpoints, func(a, b *endpointv3.ClusterLoadAssignment) int { return strings.Compare(a.ClusterName, b.ClusterName) }) ||
		!slices.IsSortedFunc(out.Secrets, func(a, b *tlsv3.Secret) int { return strings.Compare(a.Name, b.Name) }) {
		t.Errorf("output is not sorted by name")
	}
	for name, policies := range out.Origins {
		if len(clusters[name]) == 0 && !secrets[name] {
			t.Errorf("origins name %q, which is no cluster or secret of the output", name)
		}
		for _, p := range policies {
			if _, ok := out.Statuses[p]; !ok {
				t.Errorf("origins of %q name policy %s, which is not an input", name, p)
			}
		}
	}
	fuzzCheckStatuses(t, in, out)
	checkReachedCovers(t, out)
	fuzzCheckNoPlaintext(t, in, out, clusters)
}

// fuzzClusterTLS is what a cluster's transport socket does.
type fuzzClusterTLS struct {
	tls      bool // a TLS transport socket
	verifies bool // it validates the backend's certificate
	// failsClosed: it trusts an inline CA, as only the TLS of a port
	// whose policy is not accepted does.
	failsClosed bool
}

func fuzzCheckCluster(t *testing.T, c *clusterv3.Cluster, secrets, endpoints map[string]bool) *fuzzClusterTLS {
	t.Helper()
	if err := c.ValidateAll(); err != nil {
		t.Errorf("cluster %q: %v", c.Name, err)
	}
	eds := c.Name
	if n := c.GetEdsClusterConfig().GetServiceName(); n != "" {
		eds = n // a GRPCRoute's cluster reads its port's
	}
	if c.GetType() == clusterv3.Cluster_EDS && !endpoints[eds] {
		t.Errorf("EDS cluster %q has no load assignment %q", c.Name, eds)
	}
	for name, opts := range c.TypedExtensionProtocolOptions {
		m, err := anypb.UnmarshalNew(opts, proto.UnmarshalOptions{})
		if err != nil {
			t.Errorf("cluster %q: protocol options %s: %v", c.Name, name, err)
		} else if err := m.(fuzzValidator).ValidateAll(); err != nil {
			t.Errorf("cluster %q: protocol options %s: %v", c.Name, name, err)
		}
	}
	ts := c.GetTransportSocket()
	if ts == nil {
		return &fuzzClusterTLS{}
	}
	ctx := &tlsv3.UpstreamTlsContext{}
	if ts.Name != "envoy.transport_sockets.tls" {
		t.Errorf("cluster %q: transport socket %q, want envoy.transport_sockets.tls", c.Name, ts.Name)
		return &fuzzClusterTLS{}
	}
	if err := ts.GetTypedConfig().UnmarshalTo(ctx); err != nil {
		t.Errorf("cluster %q: transport socket: %v", c.Name, err)
		return &fuzzClusterTLS{}
	}
	if err := ctx.ValidateAll(); err != nil {
		t.Errorf("cluster %q: UpstreamTlsContext: %v", c.Name, err)
	}
	common := ctx.GetCommonTlsContext()
	verifies, failsClosed := false, false
	switch {
	case common.GetValidationContext().GetTrustedCa() != nil:
		verifies, failsClosed = true, true
	case common.GetCombinedValidationContext() != nil:
		sds := common.GetCombinedValidationContext().GetValidationContextSdsSecretConfig()
		verifies = sds.GetName() != ""
		if !secrets[sds.GetName()] {
			t.Errorf("cluster %q validates against SDS secret %q, which is not in the output", c.Name, sds.GetName())
		}
	case common.GetValidationContextSdsSecretConfig() != nil:
		t.Errorf("cluster %q: a plain SDS validation context drops the SAN rules", c.Name)
	}
	return &fuzzClusterTLS{tls: true, verifies: verifies, failsClosed: failsClosed}
}

// fuzzCheckStatuses: every input policy, and only those, has a status; our
// entries carry valid Accepted and ResolvedRefs conditions; there are at
// most 16 entries, and ours are there when the policy has targets and room
// is left.
func fuzzCheckStatuses(t *testing.T, in translator.Inputs, out translator.Output) {
	t.Helper()
	want := map[types.NamespacedName]*gwv1.BackendTLSPolicy{}
	for _, p := range in.Policies {
		want[fuzzName(p.Namespace, p.Name)] = p
	}
	if len(out.Statuses) != len(want) {
		t.Errorf("%d statuses for %d policies", len(out.Statuses), len(want))
	}
	for nn, p := range want {
		st, ok := out.Statuses[nn]
		if !ok {
			t.Errorf("policy %s has no status: silently dropped", nn)
			continue
		}
		if len(st.Ancestors) > 16 {
			t.Errorf("policy %s: %d ancestors, more than the API's 16", nn, len(st.Ancestors))
		}
		ours, others := 0, 0
		for i, a := range st.Ancestors {
			if a.ControllerName != translator.DefaultControllerName {
				others++
				continue
			}
			ours++
			kinds := map[string]bool{}
			for _, c := range a.Conditions {
				kinds[c.Type] = true
			}
			if !kinds["Accepted"] || !kinds["ResolvedRefs"] {
				t.Errorf("policy %s: ancestor %d has conditions %v, want Accepted and ResolvedRefs", nn, i, a.Conditions)
			}
			for _, c := range a.Conditions {
				if c.ObservedGeneration != p.Generation {
					t.Errorf("policy %s: condition %s observedGeneration %d, want the policy's generation %d", nn, c.Type, c.ObservedGeneration, p.Generation)
				}
			}
			path := field.NewPath("status", "ancestors").Index(i).Child("conditions")
			for _, err := range metav1validation.ValidateConditions(a.Conditions, path) {
				if strings.HasSuffix(err.Field, "observedGeneration") && p.Generation < 0 {
					continue // a negative generation in the input
				}
				t.Errorf("policy %s: the API server would reject the status: %v", nn, err)
			}
		}
		others = min(others, 16)
		if len(p.Spec.TargetRefs) > 0 && ours == 0 && others < 16 {
			t.Errorf("policy %s with %d targetRefs has no ancestor status of ours: %+v", nn, len(p.Spec.TargetRefs), st)
		}
	}
}

// fuzzCheckNoPlaintext: a TCP Service port that any policy targets has no
// plaintext cluster, and its cluster skips certificate validation only when
// a policy targeting it is Accepted there. A port without a cluster must
// have a warning saying why. A port only one policy targets, with no
// other port of its number, has a cluster with that policy's TLS when the
// policy is Accepted there: no cluster, or one that fails closed, must
// show on the policy's status.
func fuzzCheckNoPlaintext(t *testing.T, in translator.Inputs, out translator.Output, clusters map[string][]*fuzzClusterTLS) {
	t.Helper()
	for _, svc := range in.Services {
		svcNN := fuzzName(svc.Namespace, svc.Name)
		for _, port := range svc.Spec.Ports {
			if port.Protocol != "" && port.Protocol != corev1.ProtocolTCP {
				continue
			}
			targeted, accepted := false, false
			targeting := map[types.NamespacedName]bool{}
			for _, p := range in.Policies {
				pNN := fuzzName(p.Namespace, p.Name)
				if pNN.Namespace != svcNN.Namespace {
					continue
				}
				for _, ref := range p.Spec.TargetRefs {
					if ref.Group != "" || ref.Kind != "Service" || string(ref.Name) != svc.Name {
						continue
					}
					if ref.SectionName != nil && *ref.SectionName != "" && string(*ref.SectionName) != port.Name {
						continue
					}
					targeted, targeting[pNN] = true, true
					accepted = accepted || fuzzAcceptedOn(out.Statuses[pNN], ref)
				}
			}
			if !targeted {
				continue
			}
			name := translator.ClusterName(svcNN, port.Port)
			cs := clusters[name]
			if len(cs) == 0 && !slices.ContainsFunc(out.Warnings, func(w string) bool {
				return strings.Contains(w, svcNN.String()) && strings.Contains(w, strconv.Itoa(int(port.Port)))
			}) {
				t.Errorf("Service %s port %q (%d) is targeted by a policy but has no cluster and no warning", svcNN, port.Name, port.Port)
			}
			for _, c := range cs {
				switch {
				case !c.tls:
					t.Errorf("Service %s port %q (%d) is targeted by a policy but cluster %s is plaintext", svcNN, port.Name, port.Port, name)
				case !c.verifies && !accepted:
					t.Errorf("Service %s port %q (%d): no policy is accepted on it, but cluster %s skips certificate validation", svcNN, port.Name, port.Port, name)
				}
			}
			// Ports sharing a number share one cluster, governed by the
			// first policy among them: not checked here.
			if !accepted || len(targeting) != 1 || fuzzPortsNumbered(svc, port.Port) > 1 {
				continue
			}
			if len(cs) == 0 {
				t.Errorf("Service %s port %q (%d) has no cluster, but the one policy targeting it is Accepted there", svcNN, port.Name, port.Port)
			}
			for _, c := range cs {
				if c.failsClosed {
					t.Errorf("Service %s port %q (%d): cluster %s fails closed, but the one policy targeting it is Accepted there", svcNN, port.Name, port.Port, name)
				}
			}
		}
	}
}

// fuzzPortsNumbered counts the TCP ports of svc with that number.
func fuzzPortsNumbered(svc *corev1.Service, number int32) int {
	n := 0
	for _, p := range svc.Spec.Ports {
		if p.Port == number && (p.Protocol == "" || p.Protocol == corev1.ProtocolTCP) {
			n++
		}
	}
	return n
}

// fuzzAcceptedOn reports whether status says Accepted=True for the ancestor ref
// names.
func fuzzAcceptedOn(st gwv1.PolicyStatus, ref gwv1.LocalPolicyTargetReferenceWithSectionName) bool {
	for _, a := range st.Ancestors {
		if a.ControllerName != translator.DefaultControllerName || a.AncestorRef.Name != ref.Name ||
			!reflect.DeepEqual(a.AncestorRef.SectionName, ref.SectionName) {
			continue
		}
		for _, c := range a.Conditions {
			if c.Type == "Accepted" && c.Status == metav1.ConditionTrue {
				return true
			}
		}
	}
	return false
}

func fuzzName(namespace, name string) types.NamespacedName {
	if namespace == "" {
		namespace = "default"
	}
	return types.NamespacedName{Namespace: namespace, Name: name}
}

// fuzzSeeds are the golden inputs as manifests, and hand-made edge cases of
// the fuzzed objects, trusting the golden CA.
func fuzzSeeds(tb testing.TB) []fuzzCase {
	tb.Helper()
	inputs, err := filepath.Glob(filepath.Join(goldenDir, "*.in.yaml"))
	if err != nil || len(inputs) == 0 {
		tb.Fatalf("no golden inputs in %s (%v)", goldenDir, err)
	}
	var seeds []fuzzCase
	for _, path := range inputs {
		data, err := os.ReadFile(path)
		if err != nil {
			tb.Fatal(err)
		}
		var flags uint64
		if strings.Contains(string(data), "--allow-insecure-skip-verify") {
			flags |= flagAllowInsecure
		}
		seeds = append(seeds, fuzzCase{manifest: data, flags: flags | flagNoPolicy})
	}
	ca := fuzzGoldenCA(tb)
	base := fuzzCase{
		caData: ca, hostname: "pay.shop.example", targets: "pay", caRefs: "pay-ca",
		service: "pay||\nhttps|443|TCP\nadmin|9443|", slice: "IPv4\np|https|8443|\np|admin|9443|TCP\ne|10.0.0.1,10.0.0.2|t|zone-a\ne|10.0.0.3|f|",
	}
	with := func(edit func(*fuzzCase)) fuzzCase {
		c := base
		edit(&c)
		return c
	}
	seeds = append(seeds,
		base,
		with(func(c *fuzzCase) { c.targets = "pay|https\npay|admin|Service|\npay|https" }),
		with(func(c *fuzzCase) { c.targets = "pay|nope\nother\npay||Gateway|gateway.networking.k8s.io" }),
		with(func(c *fuzzCase) { c.sans = "H|pay.example\nU|spiffe://shop/pay\nIP|10.0.0.1\nH|" }),
		with(func(c *fuzzCase) {
			c.options = "tlsplane.io/minimumVersion=TLSv1_3\ntlsplane.io/maximumVersion=TLSv1_2\ntlsplane.io/ciphers=TLS_AES_128_GCM_SHA256"
		}),
		with(func(c *fuzzCase) {
			c.options = "tlsplane.io/verifyCertificateHashes=# pin\\n0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef\ntlsplane.io/alpnProtocols=h2,http/1.1\nexample.com/x=y"
		}),
		with(func(c *fuzzCase) {
			c.options = "tlsplane.io/subjectAltNameURIPrefixes=spiffe://prod.example.com/ns/shop/, spiffe://staging.example.com/"
		}),
		with(func(c *fuzzCase) {
			c.options = "tlsplane.io/subjectAltNameURIPrefixes=spiffe://prod.example.com,spiffe:///x/"
		}),
		with(func(c *fuzzCase) {
			c.options = "tlsplane.io/clientCertificateRef=envoy-client\ntlsplane.io/crlRef=ConfigMap/pay-crl"
		}),
		with(func(c *fuzzCase) { c.options = "tlsplane.io/crlRef=Secret/\ntlsplane.io/clientCertificateRef=Bad/Name" }),
		with(func(c *fuzzCase) { c.options = "tlsplane.io/insecureSkipVerify=true"; c.flags = flagAllowInsecure }),
		with(func(c *fuzzCase) { c.options = "tlsplane.io/insecureSkipVerify=true" }),
		with(func(c *fuzzCase) { c.options = "minimumVersion=TLSv1_2\ntlsplane.io/bogus=1" }),
		with(func(c *fuzzCase) {
			c.options = "tlsplane.io/profile=post-quantum\ntlsplane.io/signatureAlgorithms=ed25519"
		}),
		with(func(c *fuzzCase) { c.options = "tlsplane.io/profile=fips-140-3\ntlsplane.io/ecdhCurves=P-384,X25519" }),
		with(func(c *fuzzCase) { c.caData = []byte("-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n") }),
		with(func(c *fuzzCase) {
			c.caData = append([]byte("-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n"), ca...)
		}),
		with(func(c *fuzzCase) { c.caData = nil }),
		with(func(c *fuzzCase) { c.flags = flagCAInSecret; c.caRefs = "pay-ca|Secret" }),
		with(func(c *fuzzCase) { c.flags = flagBinaryData | flagOtherKey }),
		with(func(c *fuzzCase) { c.caRefs = "pay-ca\nmissing|Secret\nx|ConfigMap|example.com" }),
		with(func(c *fuzzCase) { c.caRefs = ""; c.flags = flagWellKnown }),
		with(func(c *fuzzCase) { c.flags = flagWellKnown }),
		with(func(c *fuzzCase) { c.caRefs = ""; c.caData = []byte("Custom"); c.flags = flagWellKnownOther }),
		with(func(c *fuzzCase) { c.hostname = "" }),
		with(func(c *fuzzCase) { c.service = "pay|ExternalName|pay.example.com\nhttps|443|" }),
		with(func(c *fuzzCase) { c.service = "pay||\nhttps|0|\nneg|-1|\nbig|70000|\ndns|53|UDP" }),
		with(func(c *fuzzCase) { c.slice = "IPv6\np|https|8443|\ne|fd00::1|t|\ne|not-an-ip|t|" }),
		with(func(c *fuzzCase) { c.slice = "FQDN\np|https|8443|\ne|pay.example|t|" }),
		with(func(c *fuzzCase) { c.slice = "IPv4\np|https|0|\np|https|-5|\ne||t|" }),
		with(func(c *fuzzCase) { c.flags = flagNoSliceLabel | flagDefaultNS }),
		with(func(c *fuzzCase) { c.flags = flagOtherStatus | flagOlder }),
		with(func(c *fuzzCase) { c.flags = flagUIDs }),
		with(func(c *fuzzCase) { c.flags = flagUIDs | flagCAInSecret; c.caRefs = "pay-ca|Secret"; c.caData = nil }),
	)
	return seeds
}

// fuzzGoldenCA is the CA certificate of the golden ConfigMap case.
func fuzzGoldenCA(tb testing.TB) []byte {
	tb.Helper()
	in, err := manifests.Unadmitted.Read([]string{filepath.Join(goldenDir, "ca-configmap.in.yaml")}, nil)
	if err != nil || len(in.ConfigMaps) == 0 {
		tb.Fatalf("the golden CA: %v", err)
	}
	return []byte(in.ConfigMaps[0].Data["ca.crt"])
}
