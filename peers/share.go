package peers

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	kubeinformers "k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
)

// DefaultInterval is how often a replica publishes what changed: a failure
// an Envoy reports to a non-leader reaches the leader within about this.
const DefaultInterval = 2 * time.Second

// Options configure a Share.
type Options struct {
	Client kubernetes.Interface
	// Namespace holds the replicas' ConfigMaps: the leader election's.
	Namespace string
	// Group names the replicas that share: the leader election id.
	Group string
	// Identity is this replica's, unique per process (the Lease holder's).
	Identity string
	// Exactly one of Tracker (the handshake windows) and Inventory (the
	// backend certificates) is what this Share publishes and reads.
	Tracker   Tracker
	Inventory Inventory
	// Interval defaults to DefaultInterval.
	Interval   time.Duration
	Logger     *slog.Logger
	Registerer prometheus.Registerer
	// Now defaults to time.Now.
	Now func() time.Time
}

// Share publishes this replica's state of one topic and reads its peers'.
type Share struct {
	opts    Options
	topic   topic
	name    string
	log     *slog.Logger
	metrics *metrics

	mu sync.Mutex
	// peers maps a peer's object name to its replica, to forget it.
	peers map[string]string
	// last is what this replica last wrote; lastData its JSON, gzipped.
	last     *corev1.ConfigMap
	lastData []byte
}

// New checks opts; Run starts the work.
func New(opts Options) (*Share, error) {
	if opts.Client == nil || (opts.Tracker == nil) == (opts.Inventory == nil) || opts.Namespace == "" || opts.Group == "" || opts.Identity == "" {
		return nil, fmt.Errorf("peers: Client, one of Tracker and Inventory, Namespace, Group and Identity are required")
	}
	var t topic
	if opts.Tracker != nil {
		t = handshakeTopic(opts.Tracker)
	} else {
		t = certificateTopic(opts.Inventory)
	}
	if opts.Interval <= 0 {
		opts.Interval = DefaultInterval
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	return &Share{
		opts: opts, topic: t, name: objectName(opts.Group, t.kind, opts.Identity), peers: map[string]string{},
		log: opts.Logger, metrics: newMetrics(opts.Registerer, t.metrics),
	}, nil
}

// Run watches the group's ConfigMaps and publishes every Interval, until
// ctx ends. It leaves this replica's object: its windows stay true for
// the window, while its Envoys move to other replicas.
func (s *Share) Run(ctx context.Context) error {
	factory := kubeinformers.NewSharedInformerFactoryWithOptions(s.opts.Client, 0,
		kubeinformers.WithNamespace(s.opts.Namespace),
		kubeinformers.WithTweakListOptions(func(o *metav1.ListOptions) {
			o.LabelSelector = labels.Set{s.topic.label: groupLabel(s.opts.Group)}.String()
		}))
	informer := factory.Core().V1().ConfigMaps()
	if _, err := informer.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    s.seen,
		UpdateFunc: func(_, obj any) { s.seen(obj) },
		DeleteFunc: s.gone,
	}); err != nil {
		return fmt.Errorf("peers: %w", err)
	}
	factory.Start(ctx.Done())
	defer factory.Shutdown()
	lister := informer.Lister()

	tick := time.NewTicker(s.opts.Interval)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-tick.C:
		}
		s.publish(ctx)
		if informer.Informer().HasSynced() {
			s.collect(ctx, lister)
		}
	}
}

// seen hands a peer's state to the tracker or inventory.
func (s *Share) seen(obj any) {
	cm, ok := obj.(*corev1.ConfigMap)
	if !ok || cm.Name == s.name {
		return
	}
	replica := cm.Annotations[annotationReplica]
	if replica == "" || replica == s.opts.Identity {
		return
	}
	if err := s.topic.set(replica, cm.BinaryData[s.topic.key]); err != nil {
		s.metrics.readErrors.Inc()
		s.log.Warn("a peer's "+s.topic.noun+" are unreadable; ignored", "configmap", s.opts.Namespace+"/"+cm.Name, "error", err)
		return
	}
	s.mu.Lock()
	s.peers[cm.Name] = replica
	s.metrics.peers.Set(float64(len(s.peers)))
	s.mu.Unlock()
}

// gone forgets a peer whose object was deleted.
func (s *Share) gone(obj any) {
	if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = d.Obj
	}
	cm, ok := obj.(*corev1.ConfigMap)
	if !ok || cm.Name == s.name {
		return
	}
	s.mu.Lock()
	replica, known := s.peers[cm.Name]
	delete(s.peers, cm.Name)
	s.metrics.peers.Set(float64(len(s.peers)))
	s.mu.Unlock()
	if known {
		s.topic.forget(replica)
	}
}

// publish writes this replica's state when it changed.
func (s *Share) publish(ctx context.Context) {
	data, empty, err := s.topic.export()
	if err != nil {
		s.metrics.writeErrors.Inc()
		s.log.Error("encoding the "+s.topic.noun, "error", err)
		return
	}
	s.mu.Lock()
	unchanged := bytes.Equal(data, s.lastData) || (s.last == nil && empty)
	s.mu.Unlock()
	if unchanged {
		return
	}
	if err := s.write(ctx, data); err != nil {
		s.metrics.writeErrors.Inc()
		s.log.Warn("publishing the "+s.topic.noun+" failed; retried at the next interval", "configmap", s.opts.Namespace+"/"+s.name, "error", err)
		return
	}
	s.metrics.writes.Inc()
}

// write creates or updates the object; a conflict or a deletion by a peer
// (it expired) is answered with a fresh read, then a create or an update.
func (s *Share) write(ctx context.Context, data []byte) error {
	client := s.opts.Client.CoreV1().ConfigMaps(s.opts.Namespace)
	s.mu.Lock()
	last := s.last
	s.mu.Unlock()
	var (
		cm  *corev1.ConfigMap
		err error
	)
	if last != nil {
		next := last.DeepCopy()
		s.fill(next, data)
		cm, err = client.Update(ctx, next, metav1.UpdateOptions{})
	}
	if last == nil || apierrors.IsConflict(err) || apierrors.IsNotFound(err) {
		cm, err = client.Get(ctx, s.name, metav1.GetOptions{})
		switch {
		case apierrors.IsNotFound(err):
			cm = &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: s.name, Namespace: s.opts.Namespace}}
			s.fill(cm, data)
			cm, err = client.Create(ctx, cm, metav1.CreateOptions{})
		case err == nil:
			s.fill(cm, data)
			cm, err = client.Update(ctx, cm, metav1.UpdateOptions{})
		}
	}
	if err != nil {
		return err
	}
	s.mu.Lock()
	s.last, s.lastData = cm, data
	s.mu.Unlock()
	return nil
}

func (s *Share) fill(cm *corev1.ConfigMap, data []byte) {
	if cm.Labels == nil {
		cm.Labels = map[string]string{}
	}
	if cm.Annotations == nil {
		cm.Annotations = map[string]string{}
	}
	cm.Labels[s.topic.label] = groupLabel(s.opts.Group)
	cm.Labels["app.kubernetes.io/managed-by"] = "tlsplane"
	cm.Annotations[annotationReplica] = s.opts.Identity
	cm.Annotations[annotationWritten] = s.opts.Now().UTC().Format(time.RFC3339Nano)
	cm.Data = nil
	cm.BinaryData = map[string][]byte{s.topic.key: data}
}

// collect deletes the objects of peers that wrote nothing for a window
// (the inventory's retention): everything they held is over, so nothing
// is lost.
func (s *Share) collect(ctx context.Context, lister corelisters.ConfigMapLister) {
	objs, err := lister.ConfigMaps(s.opts.Namespace).List(labels.Everything())
	if err != nil {
		return
	}
	horizon := s.opts.Now().Add(-s.topic.horizon() - s.opts.Interval)
	for _, cm := range objs {
		if cm.Name == s.name {
			continue
		}
		written, err := time.Parse(time.RFC3339Nano, cm.Annotations[annotationWritten])
		if err == nil && written.After(horizon) {
			continue
		}
		// Preconditions: a peer that came back meanwhile keeps its object.
		err = s.opts.Client.CoreV1().ConfigMaps(s.opts.Namespace).Delete(ctx, cm.Name, metav1.DeleteOptions{
			Preconditions: &metav1.Preconditions{UID: &cm.UID, ResourceVersion: &cm.ResourceVersion},
		})
		if err == nil {
			s.log.Info("deleted the "+s.topic.noun+" of a replica silent for their window", "configmap", s.opts.Namespace+"/"+cm.Name, "replica", cm.Annotations[annotationReplica])
		}
	}
}
