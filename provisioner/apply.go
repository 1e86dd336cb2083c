package provisioner

import (
	"context"
	"errors"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"
)

// write is one provisioned object's calls to the API server.
type write struct {
	kind    kind
	applied string // the object's AppliedAnnotation
	apply   func(context.Context, metav1.ApplyOptions) error
	get     func(context.Context) (metav1.Object, error)
	delete  func(context.Context, metav1.DeleteOptions) error
}

// typedClient is what writes use of a typed client of one kind.
type typedClient[T metav1.Object, A any] interface {
	Apply(context.Context, A, metav1.ApplyOptions) (T, error)
	Get(context.Context, string, metav1.GetOptions) (T, error)
	Delete(context.Context, string, metav1.DeleteOptions) error
}

// writeOf is the calls of object name of kind k through c; config is
// what apply sends, applied its AppliedAnnotation.
func writeOf[T metav1.Object, A any](k kind, c typedClient[T, A], name string, config A, applied string) write {
	return write{
		kind: k, applied: applied,
		apply: func(ctx context.Context, o metav1.ApplyOptions) error {
			_, err := c.Apply(ctx, config, o)
			return err
		},
		get:    func(ctx context.Context) (metav1.Object, error) { return c.Get(ctx, name, metav1.GetOptions{}) },
		delete: func(ctx context.Context, o metav1.DeleteOptions) error { return c.Delete(ctx, name, o) },
	}
}

// writesFor are the calls for the objects of objs (namespace and name only
// when objs comes from a Gateway no longer provisioned: then only get and
// delete are used).
func (p *Provisioner) writesFor(objs *Objects) []write {
	ns, name := objs.Namespace, objs.Name
	core, apps := p.opts.Client.CoreV1(), p.opts.Client.AppsV1()
	applied := func(a map[string]string) string { return a[AppliedAnnotation] }
	var sa, cm, deploy, svc string
	if objs.ServiceAccount != nil {
		sa, cm = applied(objs.ServiceAccount.Annotations), applied(objs.ConfigMap.Annotations)
		deploy, svc = applied(objs.Deployment.Annotations), applied(objs.Service.Annotations)
	}
	return []write{
		writeOf(kindServiceAccount, core.ServiceAccounts(ns), name, objs.ServiceAccount, sa),
		writeOf(kindConfigMap, core.ConfigMaps(ns), name, objs.ConfigMap, cm),
		writeOf(kindDeployment, apps.Deployments(ns), name, objs.Deployment, deploy),
		writeOf(kindService, core.Services(ns), name, objs.Service, svc),
	}
}

// ensure applies each object whose live copy differs from objs (by
// AppliedAnnotation and owner); an object of that name that is not ours
// is refused, never taken over.
func (p *Provisioner) ensure(ctx context.Context, gw *gwv1.Gateway, objs *Objects) error {
	var errs []error
	for _, w := range p.writesFor(objs) {
		key := objectKey{w.kind, objs.Namespace, objs.Name}
		if p.appliedLast(key) == w.applied {
			continue // written by us, and no event since says otherwise
		}
		live, ok := p.owned.get(w.kind, objs.Namespace, objs.Name)
		if !ok {
			// Not watched yet (just created) or not ours: ask, it is rare.
			obj, err := w.get(ctx)
			switch {
			case apierrors.IsNotFound(err):
			case err != nil:
				errs = append(errs, fmt.Errorf("%s %s/%s: %w", w.kind, objs.Namespace, objs.Name, err))
				continue
			default:
				live, ok = obj, true
			}
		}
		if ok && !p.provisionedByUs(live) {
			errs = append(errs, fmt.Errorf("%s %s/%s exists and was not provisioned by %s: not touched", w.kind, objs.Namespace, objs.Name, p.opts.Controller))
			continue
		}
		if ok && live.GetAnnotations()[AppliedAnnotation] == w.applied && ownedBy(live.GetOwnerReferences(), string(gw.UID)) {
			p.recordApplied(key, w.applied)
			continue
		}
		err := w.apply(ctx, metav1.ApplyOptions{FieldManager: FieldManager, Force: true})
		p.count(w.kind, "apply", err)
		if err != nil {
			errs = append(errs, fmt.Errorf("apply %s %s/%s: %w", w.kind, objs.Namespace, objs.Name, err))
			continue
		}
		p.recordApplied(key, w.applied)
		p.log.Info("provisioned", "gateway", gw.Namespace+"/"+gw.Name, "kind", w.kind, "name", objs.Name)
	}
	return errors.Join(errs...)
}

// remove deletes the objects provisioned for gw, which left our classes.
func (p *Provisioner) remove(ctx context.Context, gw *gwv1.Gateway) error {
	objs := &Objects{Namespace: gw.Namespace, Name: ObjectName(gw.Name)}
	var errs []error
	for _, w := range p.writesFor(objs) {
		live, ok := p.owned.get(w.kind, objs.Namespace, objs.Name)
		if !ok || !p.provisionedByUs(live) || !ownedBy(live.GetOwnerReferences(), string(gw.UID)) {
			continue
		}
		uid := live.GetUID()
		err := w.delete(ctx, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &uid}})
		if apierrors.IsNotFound(err) || apierrors.IsConflict(err) {
			err = nil // gone already, or another object now
		}
		p.count(w.kind, "delete", err)
		if err != nil {
			errs = append(errs, fmt.Errorf("delete %s %s/%s: %w", w.kind, objs.Namespace, objs.Name, err))
			continue
		}
		p.log.Info("deprovisioned: the Gateway is no longer of a class of ours", "gateway", gw.Namespace+"/"+gw.Name, "kind", w.kind, "name", objs.Name)
	}
	return errors.Join(errs...)
}

func (p *Provisioner) provisionedByUs(obj metav1.Object) bool {
	return obj.GetLabels()[ManagedByLabel] == ManagedBy && obj.GetAnnotations()[ControllerAnnotation] == string(p.opts.Controller)
}

func (p *Provisioner) count(k kind, op string, err error) {
	result := "ok"
	if err != nil {
		result = "error"
	}
	p.writes.WithLabelValues(string(k), op, result).Inc()
}
