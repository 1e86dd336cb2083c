package informers

import (
	"context"
	"fmt"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	kubeinformers "k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	corelisters "k8s.io/client-go/listers/core/v1"
	discoverylisters "k8s.io/client-go/listers/discovery/v1"
	"k8s.io/client-go/tools/cache"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"
	gwclient "sigs.k8s.io/gateway-api/pkg/client/clientset/versioned"
	gwinformers "sigs.k8s.io/gateway-api/pkg/client/informers/externalversions"
	gwlisters "sigs.k8s.io/gateway-api/pkg/client/listers/apis/v1"
	gwlistersv1beta1 "sigs.k8s.io/gateway-api/pkg/client/listers/apis/v1beta1"
	gwxlisters "sigs.k8s.io/gateway-api/pkg/client/listers/apisx/v1alpha1"

	"github.com/tlsplane/tlsplane/translator"
)

// noResync: every change arrives as a watch event; a periodic resync would
// only re-deliver unchanged objects.
const noResync = 0

// view is the informers of one or more namespaces and their listers, and
// of the cluster-scoped kinds.
type view struct {
	kube   []kubeinformers.SharedInformerFactory
	gw     []gwinformers.SharedInformerFactory
	scopes []scope
	// byNamespace finds the scope of a namespace; "" is the all-namespaces
	// scope when no restriction is given.
	byNamespace map[string]*scope
	hasSynced   []cache.InformerSynced

	// Cluster-scoped, nil when not served (see served).
	classLister     gwlisters.GatewayClassLister
	namespaceLister corelisters.NamespaceLister
	xMeshLister     gwxlisters.XMeshLister
}

// scope is the listers of one namespace (or of all of them). The Gateway
// API listers other than policies are nil when their kind is not served.
type scope struct {
	namespace      string
	policies       gwlisters.BackendTLSPolicyLister
	services       corelisters.ServiceLister
	endpointSlices discoverylisters.EndpointSliceLister
	configMaps     corelisters.ConfigMapLister
	secrets        corelisters.SecretLister

	gateways      gwlisters.GatewayLister
	listenerSets  gwlisters.ListenerSetLister
	grantsV1      gwlisters.ReferenceGrantLister
	grantsV1beta1 gwlistersv1beta1.ReferenceGrantLister
	// routes are the listers of the route kinds served, by kind.
	routes map[translator.Kind]cache.GenericLister

	xBackends               gwxlisters.XBackendLister
	xBackendTrafficPolicies gwxlisters.XBackendTrafficPolicyLister
}

// watched is one informer and the kind its events are counted as.
type watched struct {
	kind     string
	informer cache.SharedIndexInformer
}

// kindInformer is a factory's informer of one kind, with its lister.
type kindInformer[L any] interface {
	Informer() cache.SharedIndexInformer
	Lister() L
}

// watchServed adds an optional kind's informer to informers and returns
// its lister when the kind is served, and nil, leaving the factory without
// the informer, when it is not.
func watchServed[L any](informers *[]watched, served bool, kind string, i kindInformer[L]) L {
	var unserved L
	if !served {
		return unserved
	}
	*informers = append(*informers, watched{kind, i.Informer()})
	return i.Lister()
}

func newView(client kubernetes.Interface, gateway gwclient.Interface, namespaces []string, kinds served, s *Source) (*view, error) {
	if len(namespaces) == 0 {
		namespaces = []string{metav1.NamespaceAll}
	}
	slim := slimmer{}.slim
	v := &view{byNamespace: map[string]*scope{}}

	// Cluster-scoped kinds are read cluster-wide even when namespaces are
	// restricted: a GatewayClass, Namespace or XMesh belongs to no
	// namespace.
	var cluster []watched
	if kinds.gatewayClasses || kinds.gateways || kinds.xMeshes {
		gf := gwinformers.NewSharedInformerFactoryWithOptions(gateway, noResync, gwinformers.WithTransform(slim))
		kf := kubeinformers.NewSharedInformerFactoryWithOptions(client, noResync, kubeinformers.WithTransform(slim))
		if kinds.gatewayClasses {
			cluster = append(cluster, watched{kindGatewayClass, gf.Gateway().V1().GatewayClasses().Informer()})
			v.classLister = gf.Gateway().V1().GatewayClasses().Lister()
		}
		if kinds.gateways {
			// Namespaces are read for allowedRoutes selectors only.
			cluster = append(cluster, watched{kindNamespace, kf.Core().V1().Namespaces().Informer()})
			v.namespaceLister = kf.Core().V1().Namespaces().Lister()
		}
		v.xMeshLister = watchServed(&cluster, kinds.xMeshes, kindXMesh, gf.Experimental().V1alpha1().XMeshes())
		v.kube = append(v.kube, kf)
		v.gw = append(v.gw, gf)
	}
	if err := v.handle(cluster, "", s); err != nil {
		return nil, err
	}

	seen := map[string]bool{}
	for _, ns := range namespaces {
		if seen[ns] {
			continue
		}
		seen[ns] = true
		kf := kubeinformers.NewSharedInformerFactoryWithOptions(client, noResync,
			kubeinformers.WithNamespace(ns), kubeinformers.WithTransform(slim))
		gf := gwinformers.NewSharedInformerFactoryWithOptions(gateway, noResync,
			gwinformers.WithNamespace(ns), gwinformers.WithTransform(slim))
		sc := scope{
			namespace:      ns,
			policies:       gf.Gateway().V1().BackendTLSPolicies().Lister(),
			services:       kf.Core().V1().Services().Lister(),
			endpointSlices: kf.Discovery().V1().EndpointSlices().Lister(),
			configMaps:     kf.Core().V1().ConfigMaps().Lister(),
			secrets:        kf.Core().V1().Secrets().Lister(),
		}
		informers := []watched{
			{kindPolicy, gf.Gateway().V1().BackendTLSPolicies().Informer()},
			{kindService, kf.Core().V1().Services().Informer()},
			{kindEndpointSlice, kf.Discovery().V1().EndpointSlices().Informer()},
			{kindConfigMap, kf.Core().V1().ConfigMaps().Informer()},
			{kindSecret, kf.Core().V1().Secrets().Informer()},
		}
		sc.gateways = watchServed(&informers, kinds.gateways, kindGateway, gf.Gateway().V1().Gateways())
		sc.listenerSets = watchServed(&informers, kinds.listenerSets, kindListenerSet, gf.Gateway().V1().ListenerSets())
		sc.routes = map[translator.Kind]cache.GenericLister{}
		for _, rk := range translator.RouteKinds {
			if !kinds.routes[rk.Kind()] {
				continue
			}
			// The factory's own typed informer of the kind, found by its
			// resource.
			i, err := gf.ForResource(rk.Resource())
			if err != nil {
				return nil, fmt.Errorf("%s informer: %w", rk.Kind(), err)
			}
			sc.routes[rk.Kind()] = watchServed(&informers, true, string(rk.Kind()), i)
		}
		sc.grantsV1 = watchServed(&informers, kinds.referenceGrants == "v1", kindReferenceGrant, gf.Gateway().V1().ReferenceGrants())
		sc.grantsV1beta1 = watchServed(&informers, kinds.referenceGrants == "v1beta1", kindReferenceGrant, gf.Gateway().V1beta1().ReferenceGrants())
		x := gf.Experimental().V1alpha1()
		sc.xBackends = watchServed(&informers, kinds.xBackends, kindXBackend, x.XBackends())
		sc.xBackendTrafficPolicies = watchServed(&informers, kinds.xBackendTrafficPolicies, kindXBackendTrafficPolicy, x.XBackendTrafficPolicies())
		if err := v.handle(informers, ns, s); err != nil {
			return nil, err
		}
		v.kube = append(v.kube, kf)
		v.gw = append(v.gw, gf)
		v.scopes = append(v.scopes, sc)
	}
	for i := range v.scopes {
		v.byNamespace[v.scopes[i].namespace] = &v.scopes[i]
	}
	return v, nil
}

// handle connects informers to the source's event handler, watch error
// log and metrics, and to the sync wait.
func (v *view) handle(informers []watched, ns string, s *Source) error {
	for _, i := range informers {
		kind := i.kind
		if err := i.informer.SetWatchErrorHandlerWithContext(func(_ context.Context, _ *cache.Reflector, err error) {
			s.log.Warn("watch failed; retrying", "kind", kind, "namespace", nsForLog(ns), "error", err)
			s.metrics.watchErrors.WithLabelValues(kind).Inc()
		}); err != nil {
			return fmt.Errorf("%s informer: %w", kind, err)
		}
		reg, err := i.informer.AddEventHandler(s.handlerFor(kind))
		if err != nil {
			return fmt.Errorf("%s informer: %w", kind, err)
		}
		v.hasSynced = append(v.hasSynced, reg.HasSynced)
	}
	return nil
}

func (v *view) start(ctx context.Context) {
	for _, f := range v.kube {
		f.Start(ctx.Done())
	}
	for _, f := range v.gw {
		f.Start(ctx.Done())
	}
}

// shutdown waits for the informers' goroutines; ctx must have ended.
func (v *view) shutdown() {
	for _, f := range v.kube {
		f.Shutdown()
	}
	for _, f := range v.gw {
		f.Shutdown()
	}
}

// scopeOf is the listers that hold namespace ns, or nil if it is not watched.
func (v *view) scopeOf(ns string) *scope {
	if s, ok := v.byNamespace[metav1.NamespaceAll]; ok {
		return s
	}
	return v.byNamespace[ns]
}

// listAll concatenates one lister's objects over every scope.
func listAll[T any](v *view, list func(*scope) ([]T, error)) []T {
	var out []T
	for i := range v.scopes {
		l, _ := list(&v.scopes[i])
		out = append(out, l...)
	}
	return out
}

func (v *view) policies() []*gwv1.BackendTLSPolicy {
	return listAll(v, func(s *scope) ([]*gwv1.BackendTLSPolicy, error) { return s.policies.List(labels.Everything()) })
}

func (v *view) services() []*corev1.Service {
	return listAll(v, func(s *scope) ([]*corev1.Service, error) { return s.services.List(labels.Everything()) })
}

func (v *view) endpointSlices() []*discoveryv1.EndpointSlice {
	return listAll(v, func(s *scope) ([]*discoveryv1.EndpointSlice, error) {
		return s.endpointSlices.List(labels.Everything())
	})
}

// configMaps returns the wanted ConfigMaps that exist, by key lookup, so
// the cost follows the number of references, not of ConfigMaps.
func (v *view) configMaps(wanted map[types.NamespacedName]int) []*corev1.ConfigMap {
	var out []*corev1.ConfigMap
	for _, nn := range sortedNames(wanted) {
		if s := v.scopeOf(nn.Namespace); s != nil {
			if cm, err := s.configMaps.ConfigMaps(nn.Namespace).Get(nn.Name); err == nil {
				out = append(out, cm)
			}
		}
	}
	return out
}

func (v *view) secrets(wanted map[types.NamespacedName]int) []*corev1.Secret {
	var out []*corev1.Secret
	for _, nn := range sortedNames(wanted) {
		if s := v.scopeOf(nn.Namespace); s != nil {
			if sec, err := s.secrets.Secrets(nn.Namespace).Get(nn.Name); err == nil {
				out = append(out, sec)
			}
		}
	}
	return out
}

func (v *view) namespacesForLog() string {
	var names []string
	for _, s := range v.scopes {
		names = append(names, nsForLog(s.namespace))
	}
	return strings.Join(names, ",")
}

func nsForLog(ns string) string {
	if ns == metav1.NamespaceAll {
		return "(all)"
	}
	return ns
}

func sortedNames[V any](set map[types.NamespacedName]V) []types.NamespacedName {
	out := make([]types.NamespacedName, 0, len(set))
	for nn := range set {
		out = append(out, nn)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].String() < out[j].String() })
	return out
}
