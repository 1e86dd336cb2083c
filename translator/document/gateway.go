package document

import (
	"fmt"

	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	tlsv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/transport_sockets/tls/v3"
	"google.golang.org/protobuf/proto"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"
	gwxv1a1 "sigs.k8s.io/gateway-api/apisx/v1alpha1"

	"github.com/tlsplane/tlsplane/translator"
	"github.com/tlsplane/tlsplane/translator/input"
)

// redactedKey stands for a listener certificate's private key in documents
// meant for people and golden files.
const redactedKey = "<redacted>"

// renderGatewayAPI adds the Gateway API part of the document, only when
// there is one, so documents of policies alone keep their shape. Its
// elements are deferred.
func renderGatewayAPI(doc map[string][]any, in translator.Inputs, out translator.Output) {
	if len(out.Fleets) > 0 {
		doc["fleets"] = []any{}
	}
	for _, name := range input.SortedNames(out.Fleets) {
		f := out.Fleets[name]
		doc["fleets"] = append(doc["fleets"], deferred(func() (any, error) {
			fleet := map[string]any{"name": name}
			var err error
			if fleet["listeners"], err = protoValues("listener", f.Listeners, nil); err != nil {
				return nil, err
			}
			if fleet["routes"], err = protoValues("route configuration", f.Routes, nil); err != nil {
				return nil, err
			}
			if fleet["secrets"], err = protoValues("secret", f.Secrets, func(m proto.Message) proto.Message { return redacted(m.(*tlsv3.Secret)) }); err != nil {
				return nil, err
			}
			if len(f.Clusters) > 0 {
				// Only Gateways with a backend client certificate have them:
				// other fleets' documents keep their shape.
				if fleet["clusters"], err = protoValues("cluster", f.Clusters, nil); err != nil {
					return nil, err
				}
			}
			return fleet, nil
		}))
	}
	st := out.GatewayAPI
	if len(st.GatewayClasses) > 0 {
		doc["gatewayclasses"] = []any{}
	}
	for _, c := range uniqueSortedClasses(in.GatewayClasses) {
		status, ok := st.GatewayClasses[c.Name]
		if !ok {
			continue
		}
		doc["gatewayclasses"] = append(doc["gatewayclasses"], deferred(func() (any, error) {
			o := c.DeepCopy()
			o.APIVersion, o.Kind, o.Status = gwv1.GroupVersion.String(), "GatewayClass", status
			v, err := jsonValue(o)
			if err != nil {
				return nil, fmt.Errorf("GatewayClass %s: %w", c.Name, err)
			}
			return v, nil
		}))
	}
	renderWithStatus(doc, "gateways", "Gateway", in.Gateways, st.Gateways, func(o *gwv1.Gateway) *gwv1.GatewayStatus { return &o.Status })
	renderWithStatus(doc, "listenersets", "ListenerSet", in.ListenerSets, st.ListenerSets, func(o *gwv1.ListenerSet) *gwv1.ListenerSetStatus { return &o.Status })
	for _, rk := range translator.RouteKinds {
		renderRoutes(doc, rk, in, translator.RouteStatusesOf(st, rk.Kind()))
	}
	renderSorted(doc, "xbackends", gwxv1a1.GroupVersion.String(), string(translator.KindXBackend), in.XBackends, input.SortedKeys(st.XBackends),
		func(o *gwxv1a1.XBackend, nn types.NamespacedName) *gwxv1a1.XBackend {
			c := o.DeepCopy()
			c.Status = st.XBackends[nn]
			return c
		})
	renderSorted(doc, "xbackendtrafficpolicies", gwxv1a1.GroupVersion.String(), "XBackendTrafficPolicy", in.XBackendTrafficPolicies,
		input.SortedKeys(st.XBackendTrafficPolicies), func(o *gwxv1a1.XBackendTrafficPolicy, nn types.NamespacedName) *gwxv1a1.XBackendTrafficPolicy {
			c := o.DeepCopy()
			c.Status = st.XBackendTrafficPolicies[nn]
			return c
		})
	renderXMeshes(doc, in.XMeshes, st.XMeshes)
}

// renderXMeshes adds the XMeshes with a status of ours, by name (they are
// cluster-scoped: renderSorted's keys would give them a namespace), the
// last of a name as the translator read it.
func renderXMeshes(doc map[string][]any, meshes []*gwxv1a1.XMesh, statuses map[string]gwxv1a1.MeshStatus) {
	if len(statuses) == 0 {
		return
	}
	byName := make(map[string]*gwxv1a1.XMesh, len(meshes))
	for _, m := range meshes {
		byName[m.Name] = m
	}
	doc["xmeshes"] = []any{}
	for _, name := range input.SortedNames(statuses) {
		doc["xmeshes"] = append(doc["xmeshes"], deferred(func() (any, error) {
			o := byName[name].DeepCopy()
			o.APIVersion, o.Kind, o.Status = gwxv1a1.GroupVersion.String(), string(translator.KindXMesh), statuses[name]
			v, err := jsonValue(o)
			if err != nil {
				return nil, fmt.Errorf("XMesh %s: %w", name, err)
			}
			return v, nil
		}))
	}
}

// renderWithStatus adds under key, sorted, a copy of each object of kind
// that has a computed status, with that status where status says a T
// keeps it; only when there are some, so documents without that kind keep
// their shape.
func renderWithStatus[T interface {
	object
	DeepCopy() T
}, S any](doc map[string][]any, key, kind string, objects []T, statuses map[types.NamespacedName]S, status func(T) *S) {
	renderSorted(doc, key, gwv1.GroupVersion.String(), kind, objects, input.SortedKeys(statuses), func(o T, nn types.NamespacedName) T {
		c := o.DeepCopy()
		*status(c) = statuses[nn]
		return c
	})
}

// renderRoutes is renderWithStatus for the routes of kind rk, under its
// resource's name.
func renderRoutes(doc map[string][]any, rk translator.RouteKind, in translator.Inputs, statuses translator.RouteStatuses) {
	var objects []object
	for _, o := range rk.Objects(&in) {
		if r, ok := o.(object); ok {
			objects = append(objects, r)
		}
	}
	r := rk.Resource()
	renderSorted(doc, r.Resource, r.GroupVersion().String(), string(rk.Kind()), objects, statuses.SortedKeys(), func(o object, nn types.NamespacedName) object {
		c := o.DeepCopyObject().(object)
		*rk.RouteStatus(c), _ = statuses.Get(nn)
		return c
	})
}

// object is an API object.
type object interface {
	metav1.Object
	runtime.Object
}

// renderSorted adds under key, in the order of names, what withStatus
// makes of the object of each name (of apiVersion and kind); only when
// there are names.
func renderSorted[T object](doc map[string][]any, key, apiVersion, kind string, objects []T, names []types.NamespacedName, withStatus func(T, types.NamespacedName) T) {
	if len(names) == 0 {
		return
	}
	byName := make(map[types.NamespacedName]T, len(objects))
	for _, o := range objects {
		byName[input.NameOfObject(o)] = o
	}
	doc[key] = []any{}
	for _, nn := range names {
		doc[key] = append(doc[key], deferred(func() (any, error) {
			o := withStatus(byName[nn], nn)
			o.GetObjectKind().SetGroupVersionKind(schema.FromAPIVersionAndKind(apiVersion, kind))
			o.SetNamespace(nn.Namespace)
			v, err := jsonValue(o)
			if err != nil {
				return nil, fmt.Errorf("%s %s: %w", kind, nn, err)
			}
			return v, nil
		}))
	}
}

// redacted is a copy of a certificate secret without its private key.
func redacted(s *tlsv3.Secret) *tlsv3.Secret {
	c := proto.Clone(s).(*tlsv3.Secret)
	if cert := c.GetTlsCertificate(); cert != nil {
		cert.PrivateKey = &corev3.DataSource{Specifier: &corev3.DataSource_InlineString{InlineString: redactedKey}}
	}
	return c
}

func uniqueSortedClasses(in []*gwv1.GatewayClass) []*gwv1.GatewayClass {
	byName := make(map[string]*gwv1.GatewayClass, len(in))
	for _, c := range in {
		byName[c.Name] = c
	}
	out := make([]*gwv1.GatewayClass, 0, len(byName))
	for _, n := range input.SortedNames(byName) {
		out = append(out, byName[n])
	}
	return out
}

// protoValues is items (each through show, unless nil) as document
// values.
func protoValues[T interface {
	proto.Message
	GetName() string
}](what string, items []T, show func(proto.Message) proto.Message) ([]any, error) {
	out := make([]any, 0, len(items))
	for _, item := range items {
		var m proto.Message = item
		if show != nil {
			m = show(m)
		}
		out = append(out, protoNode{what + " " + item.GetName(), m})
	}
	return out, nil
}
