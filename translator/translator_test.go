package translator_test

import (
	"bytes"
	"fmt"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/tlsplane/tlsplane/translator"
)

// A Translator gives exactly Translate's output, whatever it remembers: one
// Translator is fed every golden case in turn, then a sequence of edits,
// each result compared with a fresh Translate of the same inputs.
func TestTranslatorMatchesTranslate(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	tr := translator.New()
	var previous translator.PreviousStatus
	check := func(step string, in translator.Inputs, opts translator.Options) {
		t.Helper()
		got := tr.Translate(in, previous, now, opts)
		want := translator.Translate(in, previous, now, opts)
		if g, w := render(t, in, got), render(t, in, want); !bytes.Equal(g, w) {
			t.Fatalf("%s: Translator output differs from Translate:\n%s\nwant:\n%s", step, g, w)
		}
		if !reflect.DeepEqual(got.Origins, want.Origins) {
			t.Fatalf("%s: origins %v, want %v", step, got.Origins, want.Origins)
		}
		if !reflect.DeepEqual(got.Warnings, want.Warnings) {
			t.Fatalf("%s: warnings %q, want %q", step, got.Warnings, want.Warnings)
		}
		previous = translator.PreviousStatus(got.Statuses)
		now = now.Add(time.Minute)
	}

	files, err := filepath.Glob(filepath.Join(goldenDir, "*.in.yaml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no golden inputs: %v", err)
	}
	for _, f := range files {
		name := strings.TrimSuffix(filepath.Base(f), ".in.yaml")
		in := readCase(t, name)
		check(name, in, translator.Options{})
		check(name+" again", in, translator.Options{})
	}

	previous = nil
	in := editableInputs(8)
	check("initial", in, translator.Options{})
	check("unchanged", in, translator.Options{})
	edits := []struct {
		name string
		edit func(in *translator.Inputs)
	}{
		{"CA rotated", func(in *translator.Inputs) {
			in.ConfigMaps[1] = configMap(in.ConfigMaps[1], "2", translator.TestCA2)
		}},
		{"CA rotated back at a new resourceVersion", func(in *translator.Inputs) {
			in.ConfigMaps[1] = configMap(in.ConfigMaps[1], "3", translator.TestCA)
		}},
		{"CA broken", func(in *translator.Inputs) {
			in.ConfigMaps[2] = configMap(in.ConfigMaps[2], "2", "not PEM")
		}},
		{"CA deleted", func(in *translator.Inputs) { in.ConfigMaps = in.ConfigMaps[1:] }},
		{"options changed", func(in *translator.Inputs) {
			p := in.Policies[3].DeepCopy()
			p.ResourceVersion, p.Generation = "2", 2
			p.Spec.Options = map[gwv1.AnnotationKey]gwv1.AnnotationValue{"tlsplane.io/alpnProtocols": "h2"}
			in.Policies[3] = p
		}},
		{"invalid option", func(in *translator.Inputs) {
			p := in.Policies[3].DeepCopy()
			p.ResourceVersion, p.Generation = "3", 3
			p.Spec.Options = map[gwv1.AnnotationKey]gwv1.AnnotationValue{"tlsplane.io/minimumVersion": "SSLv3"}
			in.Policies[3] = p
		}},
		{"conflicting newer policy", func(in *translator.Inputs) {
			p := in.Policies[4].DeepCopy()
			p.Name, p.UID = "zz-newer", "uid-zz"
			p.CreationTimestamp = metav1.NewTime(p.CreationTimestamp.Add(time.Hour))
			in.Policies = append(in.Policies, p)
		}},
		{"conflicting older policy", func(in *translator.Inputs) {
			p := in.Policies[5].DeepCopy()
			p.Name, p.UID = "aa-older", "uid-aa"
			p.CreationTimestamp = metav1.NewTime(p.CreationTimestamp.Add(-time.Hour))
			in.Policies = append(in.Policies, p)
		}},
		{"endpoints changed", func(in *translator.Inputs) {
			es := in.EndpointSlices[6].DeepCopy()
			es.ResourceVersion = "2"
			es.Endpoints = es.Endpoints[:1]
			in.EndpointSlices[6] = es
		}},
		{"service deleted", func(in *translator.Inputs) { in.Services = in.Services[:len(in.Services)-1] }},
		{"port added", func(in *translator.Inputs) {
			s := in.Services[0].DeepCopy()
			s.ResourceVersion = "2"
			s.Spec.Ports = append(s.Spec.Ports, corev1.ServicePort{Name: "metrics", Port: 9090})
			in.Services[0] = s
		}},
		{"policy deleted", func(in *translator.Inputs) { in.Policies = in.Policies[1:] }},
		{"same objects, new pointers", func(in *translator.Inputs) {
			for i, cm := range in.ConfigMaps {
				in.ConfigMaps[i] = cm.DeepCopy()
			}
			for i, p := range in.Policies {
				in.Policies[i] = p.DeepCopy()
			}
		}},
		{"reordered", func(in *translator.Inputs) {
			for i, j := 0, len(in.Services)-1; i < j; i, j = i+1, j-1 {
				in.Services[i], in.Services[j] = in.Services[j], in.Services[i]
			}
		}},
	}
	for _, e := range edits {
		next := copyInputs(in)
		e.edit(&next)
		in = next
		check(e.name, in, translator.Options{})
		check(e.name+", again", in, translator.Options{})
	}
	check("other options", in, translator.Options{AllowInsecureSkipVerify: true, SystemCABundlePath: "/ca.pem"})
	check("previous status dropped", func() translator.Inputs { previous = nil; return in }(), translator.Options{AllowInsecureSkipVerify: true, SystemCABundlePath: "/ca.pem"})
}

func copyInputs(in translator.Inputs) translator.Inputs {
	return translator.Inputs{
		Policies:       append([]*gwv1.BackendTLSPolicy(nil), in.Policies...),
		Services:       append([]*corev1.Service(nil), in.Services...),
		EndpointSlices: append([]*discoveryv1.EndpointSlice(nil), in.EndpointSlices...),
		ConfigMaps:     append([]*corev1.ConfigMap(nil), in.ConfigMaps...),
		Secrets:        append([]*corev1.Secret(nil), in.Secrets...),
	}
}

func configMap(cm *corev1.ConfigMap, resourceVersion, pem string) *corev1.ConfigMap {
	c := cm.DeepCopy()
	c.ResourceVersion = resourceVersion
	c.Data = map[string]string{"ca.crt": pem}
	return c
}

// editableInputs are n Services, each with a policy, a CA ConfigMap and an
// EndpointSlice, all with UIDs and resourceVersions as from the API server.
func editableInputs(n int) translator.Inputs {
	var in translator.Inputs
	ready := true
	port, portName := int32(8443), "https"
	for i := range n {
		ns, name := fmt.Sprintf("team-%d", i%3), fmt.Sprintf("svc-%d", i)
		meta := func(name string) metav1.ObjectMeta {
			return metav1.ObjectMeta{Namespace: ns, Name: name, UID: types.UID("uid-" + ns + "-" + name), ResourceVersion: "1", Generation: 1}
		}
		in.Services = append(in.Services, &corev1.Service{
			ObjectMeta: meta(name),
			Spec:       corev1.ServiceSpec{Ports: []corev1.ServicePort{{Name: "https", Port: 443}}},
		})
		es := &discoveryv1.EndpointSlice{
			ObjectMeta:  meta(name + "-x"),
			AddressType: discoveryv1.AddressTypeIPv4,
			Ports:       []discoveryv1.EndpointPort{{Name: &portName, Port: &port}},
			Endpoints: []discoveryv1.Endpoint{
				{Addresses: []string{fmt.Sprintf("10.0.%d.1", i)}, Conditions: discoveryv1.EndpointConditions{Ready: &ready}},
				{Addresses: []string{fmt.Sprintf("10.0.%d.2", i)}, Conditions: discoveryv1.EndpointConditions{Ready: &ready}},
			},
		}
		es.Labels = map[string]string{discoveryv1.LabelServiceName: name}
		in.EndpointSlices = append(in.EndpointSlices, es)
		in.ConfigMaps = append(in.ConfigMaps, &corev1.ConfigMap{ObjectMeta: meta(name + "-ca"), Data: map[string]string{"ca.crt": translator.TestCA}})
		in.Policies = append(in.Policies, &gwv1.BackendTLSPolicy{
			ObjectMeta: meta(name + "-tls"),
			Spec: gwv1.BackendTLSPolicySpec{
				TargetRefs: []gwv1.LocalPolicyTargetReferenceWithSectionName{{
					LocalPolicyTargetReference: gwv1.LocalPolicyTargetReference{Kind: "Service", Name: gwv1.ObjectName(name)},
				}},
				Validation: gwv1.BackendTLSPolicyValidation{
					Hostname:          gwv1.PreciseHostname(name + ".example"),
					CACertificateRefs: []gwv1.LocalObjectReference{{Kind: "ConfigMap", Name: gwv1.ObjectName(name + "-ca")}},
				},
				Options: map[gwv1.AnnotationKey]gwv1.AnnotationValue{"tlsplane.io/alpnProtocols": "h2,http/1.1"},
			},
		})
	}
	return in
}
