package perf

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/tlsplane/tlsplane/translator"
	"github.com/tlsplane/tlsplane/translator/translatortest"
)

// caPEM and caPEM2 are self-signed CAs (keys discarded), valid until
// 2126; caPEM2 is what a rotation switches to.
const (
	caPEM  = translatortest.CA
	caPEM2 = translatortest.CA2
)

// Inputs are n policy-targeted Services as an informer would hand them
// over (UIDs, resourceVersions): each with its own CA ConfigMap, SANs, a
// few options and one EndpointSlice of two ready addresses, spread over 50
// namespaces. The shape is translator's BenchmarkTranslate's.
func Inputs(n int) translator.Inputs {
	var in translator.Inputs
	ready := true
	port, portName := int32(8443), "https"
	for i := range n {
		ns, name := fmt.Sprintf("team-%d", i%50), fmt.Sprintf("svc-%d", i)
		meta := func(name string) metav1.ObjectMeta {
			return metav1.ObjectMeta{Namespace: ns, Name: name, UID: types.UID(fmt.Sprintf("uid-%s-%s", ns, name)), ResourceVersion: "1", Generation: 1}
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
				{Addresses: []string{fmt.Sprintf("10.%d.%d.1", i/250%250, i%250)}, Conditions: discoveryv1.EndpointConditions{Ready: &ready}},
				{Addresses: []string{fmt.Sprintf("10.%d.%d.2", i/250%250, i%250)}, Conditions: discoveryv1.EndpointConditions{Ready: &ready}},
			},
		}
		es.Labels = map[string]string{discoveryv1.LabelServiceName: name}
		in.EndpointSlices = append(in.EndpointSlices, es)
		in.ConfigMaps = append(in.ConfigMaps, &corev1.ConfigMap{ObjectMeta: meta(name + "-ca"), Data: map[string]string{"ca.crt": caPEM}})
		in.Policies = append(in.Policies, &gwv1.BackendTLSPolicy{
			ObjectMeta: meta(name + "-tls"),
			Spec: gwv1.BackendTLSPolicySpec{
				TargetRefs: []gwv1.LocalPolicyTargetReferenceWithSectionName{{
					LocalPolicyTargetReference: gwv1.LocalPolicyTargetReference{Kind: "Service", Name: gwv1.ObjectName(name)},
				}},
				Validation: gwv1.BackendTLSPolicyValidation{
					Hostname:          gwv1.PreciseHostname(name + ".example"),
					CACertificateRefs: []gwv1.LocalObjectReference{{Kind: "ConfigMap", Name: gwv1.ObjectName(name + "-ca")}},
					SubjectAltNames: []gwv1.SubjectAltName{
						{Type: gwv1.HostnameSubjectAltNameType, Hostname: gwv1.Hostname(name + ".internal.example")},
						{Type: gwv1.URISubjectAltNameType, URI: gwv1.AbsoluteURI("spiffe://cluster.local/ns/" + ns + "/sa/" + name)},
					},
				},
				Options: map[gwv1.AnnotationKey]gwv1.AnnotationValue{
					"tlsplane.io/minimumVersion": "TLSv1_3",
					"tlsplane.io/alpnProtocols":  "h2,http/1.1",
					"tlsplane.io/ecdhCurves":     "X25519,P-256",
				},
			},
		})
	}
	return in
}

// RotateCA returns in with the i-th CA ConfigMap replaced by a new object
// at resourceVersion rv holding the other CA than before: what an informer
// delivers after a CA rotation. The slices are copied; objects are shared.
func RotateCA(in translator.Inputs, i, rv int) translator.Inputs {
	out := in
	out.ConfigMaps = append([]*corev1.ConfigMap(nil), in.ConfigMaps...)
	out.ConfigMaps[i] = RotatedCA(in.ConfigMaps[i], rv)
	return out
}

// RotatedCA is a new ConfigMap cm at resourceVersion rv holding the other
// CA than cm does.
func RotatedCA(cm *corev1.ConfigMap, rv int) *corev1.ConfigMap {
	next := caPEM2
	if cm.Data["ca.crt"] == caPEM2 {
		next = caPEM
	}
	out := cm.DeepCopy()
	out.ResourceVersion = fmt.Sprint(rv)
	out.Data = map[string]string{"ca.crt": next}
	return out
}
