package inject

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kubeinformers "k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
)

// liveGetTimeout bounds the one read a cache miss costs; the API server
// waits at most the webhook's timeoutSeconds for the whole answer.
const liveGetTimeout = 3 * time.Second

// WatchNamespaces is the webhook's only read of the API server: the
// namespaces, watched into a cache, whose labels the handler checks. A
// namespace the cache does not hold yet (created a moment ago, its Pod
// already being admitted) is read once directly. It returns when ctx
// ends or the cache has synced (then synced is true).
func WatchNamespaces(ctx context.Context, client kubernetes.Interface) (get NamespaceGetter, synced bool) {
	factory := kubeinformers.NewSharedInformerFactory(client, 0)
	lister := factory.Core().V1().Namespaces().Lister()
	informer := factory.Core().V1().Namespaces().Informer()
	factory.Start(ctx.Done())
	synced = cache.WaitForCacheSync(ctx.Done(), informer.HasSynced)
	return func(ctx context.Context, name string) (*corev1.Namespace, error) {
		ns, err := lister.Get(name)
		if err == nil {
			return ns, nil
		}
		if !apierrors.IsNotFound(err) {
			return nil, err
		}
		ctx, cancel := context.WithTimeout(ctx, liveGetTimeout)
		defer cancel()
		ns, err = client.CoreV1().Namespaces().Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return nil, fmt.Errorf("not in the cache, and read: %w", err)
		}
		return ns, nil
	}, synced
}
