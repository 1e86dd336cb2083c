package provisioner

import (
	"context"
	"log/slog"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"
)

// kind names one kind of provisioned object.
type kind string

const (
	kindServiceAccount kind = "ServiceAccount"
	kindConfigMap      kind = "ConfigMap"
	kindDeployment     kind = "Deployment"
	kindService        kind = "Service"
)

var kinds = []kind{kindServiceAccount, kindConfigMap, kindDeployment, kindService}

// owned watches what tlsplane provisioned (ManagedByLabel), in the watched
// namespaces, to compare before writing and to hear of edits and deletes.
type owned struct {
	factories []informers.SharedInformerFactory
	// stores per kind, per namespace ("" when every namespace is watched).
	stores map[kind]map[string]cache.Indexer
	synced []cache.InformerSynced
}

// changed hears of each add, update (deleted false) and delete of a
// watched object, on the informers' goroutines.
func newOwned(client kubernetes.Interface, namespaces []string, log *slog.Logger, changed func(k kind, obj metav1.Object, deleted bool)) (*owned, error) {
	if len(namespaces) == 0 {
		namespaces = []string{metav1.NamespaceAll}
	}
	o := &owned{stores: map[kind]map[string]cache.Indexer{}}
	handler := func(k kind) cache.ResourceEventHandler {
		tell := func(obj any, deleted bool) {
			if tomb, ok := obj.(cache.DeletedFinalStateUnknown); ok {
				obj = tomb.Obj
			}
			if m, ok := obj.(metav1.Object); ok {
				changed(k, m, deleted)
			}
		}
		return cache.ResourceEventHandlerFuncs{
			AddFunc:    func(obj any) { tell(obj, false) },
			UpdateFunc: func(_, obj any) { tell(obj, false) },
			DeleteFunc: func(obj any) { tell(obj, true) },
		}
	}
	for _, ns := range namespaces {
		f := informers.NewSharedInformerFactoryWithOptions(client, 0, informers.WithNamespace(ns),
			informers.WithTweakListOptions(func(o *metav1.ListOptions) { o.LabelSelector = ManagedByLabel + "=" + ManagedBy }))
		byKind := map[kind]cache.SharedIndexInformer{
			kindServiceAccount: f.Core().V1().ServiceAccounts().Informer(),
			kindConfigMap:      f.Core().V1().ConfigMaps().Informer(),
			kindDeployment:     f.Apps().V1().Deployments().Informer(),
			kindService:        f.Core().V1().Services().Informer(),
		}
		for k, inf := range byKind {
			if _, err := inf.AddEventHandler(handler(k)); err != nil {
				return nil, err
			}
			// A refused list (RBAC) would otherwise only reach klog, and
			// the provisioner would wait for the sync silently.
			if err := inf.SetWatchErrorHandler(func(_ *cache.Reflector, err error) {
				log.Warn("watch of provisioned objects failed; retrying", "kind", k, "namespace", ns, "error", err)
			}); err != nil {
				return nil, err
			}
			if o.stores[k] == nil {
				o.stores[k] = map[string]cache.Indexer{}
			}
			o.stores[k][ns] = inf.GetIndexer()
			o.synced = append(o.synced, inf.HasSynced)
		}
		o.factories = append(o.factories, f)
	}
	return o, nil
}

// run watches until ctx ends; it reports whether the caches synced.
func (o *owned) run(ctx context.Context) bool {
	for _, f := range o.factories {
		f.Start(ctx.Done())
	}
	ok := cache.WaitForCacheSync(ctx.Done(), o.synced...)
	go func() {
		<-ctx.Done()
		for _, f := range o.factories {
			f.Shutdown()
		}
	}()
	return ok
}

// get is the cached object of kind k, namespace/name.
func (o *owned) get(k kind, ns, name string) (metav1.Object, bool) {
	store := o.stores[k][ns]
	if store == nil {
		store = o.stores[k][metav1.NamespaceAll]
	}
	if store == nil {
		return nil, false
	}
	obj, ok, err := store.GetByKey(ns + "/" + name)
	if err != nil || !ok {
		return nil, false
	}
	m, ok := obj.(metav1.Object)
	return m, ok
}

// owners are the Gateways that every cached object names (label and
// namespace), with the controller that provisioned it.
func (o *owned) owners(each func(gateway types.NamespacedName, controller string)) {
	for _, byNS := range o.stores {
		for _, store := range byNS {
			for _, obj := range store.List() {
				if m, ok := obj.(metav1.Object); ok {
					if gw, ok := ownerGateway(m); ok {
						each(gw, m.GetAnnotations()[ControllerAnnotation])
					}
				}
			}
		}
	}
}

// ownerGateway is the Gateway an object is labelled with.
func ownerGateway(m metav1.Object) (types.NamespacedName, bool) {
	gw := m.GetLabels()[gwv1.GatewayNameLabelKey]
	return types.NamespacedName{Namespace: m.GetNamespace(), Name: gw}, gw != ""
}
