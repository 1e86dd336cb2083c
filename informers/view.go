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
)

// noResync: every change arrives as a watch event; a periodic resync would
// only re-deliver unchanged objects.
const noResync = 0

// view is the informers of one or more namespaces and their listers.
type view struct {
	kube   []kubeinformers.SharedInformerFactory
	gw     []gwinformers.SharedInformerFactory
	scopes []scope
	// byNamespace finds the scope of a namespace; "" is the all-namespaces
	// scope when no restriction is given.
	byNamespace map[string]*scope
	hasSynced   []cache.InformerSynced
}

// scope is the listers of one namespace (or of all of them).
type scope struct {
	namespace      string
	policies       gwlisters.BackendTLSPolicyLister
	services       corelisters.ServiceLister
	endpointSlices discoverylisters.EndpointSliceLister
	configMaps     corelisters.ConfigMapLister
	secrets        corelisters.SecretLister
}

func newView(client kubernetes.Interface, gateway gwclient.Interface, namespaces []string, s *Source) (*view, error) {
	if len(namespaces) == 0 {
		namespaces = []string{metav1.NamespaceAll}
	}
	v := &view{byNamespace: map[string]*scope{}}
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
		informers := []struct {
			kind     string
			informer cache.SharedIndexInformer
		}{
			{kindPolicy, gf.Gateway().V1().BackendTLSPolicies().Informer()},
			{kindService, kf.Core().V1().Services().Informer()},
			{kindEndpointSlice, kf.Discovery().V1().EndpointSlices().Informer()},
			{kindConfigMap, kf.Core().V1().ConfigMaps().Informer()},
			{kindSecret, kf.Core().V1().Secrets().Informer()},
		}
		for _, i := range informers {
			kind := i.kind
			if err := i.informer.SetWatchErrorHandlerWithContext(func(_ context.Context, _ *cache.Reflector, err error) {
				s.log.Warn("watch failed; retrying", "kind", kind, "namespace", nsForLog(ns), "error", err)
				s.metrics.watchErrors.WithLabelValues(kind).Inc()
			}); err != nil {
				return nil, fmt.Errorf("%s informer: %w", kind, err)
			}
			reg, err := i.informer.AddEventHandler(s.handlerFor(kind))
			if err != nil {
				return nil, fmt.Errorf("%s informer: %w", kind, err)
			}
			v.hasSynced = append(v.hasSynced, reg.HasSynced)
		}
		v.kube = append(v.kube, kf)
		v.gw = append(v.gw, gf)
		v.scopes = append(v.scopes, scope{
			namespace:      ns,
			policies:       gf.Gateway().V1().BackendTLSPolicies().Lister(),
			services:       kf.Core().V1().Services().Lister(),
			endpointSlices: kf.Discovery().V1().EndpointSlices().Lister(),
			configMaps:     kf.Core().V1().ConfigMaps().Lister(),
			secrets:        kf.Core().V1().Secrets().Lister(),
		})
	}
	for i := range v.scopes {
		v.byNamespace[v.scopes[i].namespace] = &v.scopes[i]
	}
	return v, nil
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

func (v *view) policies() []*gwv1.BackendTLSPolicy {
	var out []*gwv1.BackendTLSPolicy
	for _, s := range v.scopes {
		l, _ := s.policies.List(labels.Everything())
		out = append(out, l...)
	}
	return out
}

func (v *view) services() []*corev1.Service {
	var out []*corev1.Service
	for _, s := range v.scopes {
		l, _ := s.services.List(labels.Everything())
		out = append(out, l...)
	}
	return out
}

func (v *view) endpointSlices() []*discoveryv1.EndpointSlice {
	var out []*discoveryv1.EndpointSlice
	for _, s := range v.scopes {
		l, _ := s.endpointSlices.List(labels.Everything())
		out = append(out, l...)
	}
	return out
}

// configMaps returns the wanted ConfigMaps that exist, by key lookup, so
// the cost follows the number of references, not of ConfigMaps.
func (v *view) configMaps(wanted map[types.NamespacedName]bool) []*corev1.ConfigMap {
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

func (v *view) secrets(wanted map[types.NamespacedName]bool) []*corev1.Secret {
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

func sortedNames(set map[types.NamespacedName]bool) []types.NamespacedName {
	out := make([]types.NamespacedName, 0, len(set))
	for nn := range set {
		out = append(out, nn)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].String() < out[j].String() })
	return out
}
