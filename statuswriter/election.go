package statuswriter

import (
	"context"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/leaderelection"
	"k8s.io/client-go/tools/leaderelection/resourcelock"
)

// campaign competes for the Lease until ctx ends, writing status during each
// term it wins. Losing the Lease stops the writes at once and campaigns
// again: serving xDS never depends on being the leader.
func (w *Writer) campaign(ctx context.Context) error {
	e := w.opts.Election
	lock := &resourcelock.LeaseLock{
		LeaseMeta:  metav1.ObjectMeta{Namespace: e.Namespace, Name: e.Name},
		Client:     e.Client.CoordinationV1(),
		LockConfig: resourcelock.ResourceLockConfig{Identity: e.Identity},
	}
	cfg := leaderelection.LeaderElectionConfig{
		Lock:          lock,
		LeaseDuration: e.LeaseDuration,
		RenewDeadline: e.RenewDeadline,
		RetryPeriod:   e.RetryPeriod,
		// A replica shutting down hands the Lease over without waiting
		// for it to expire.
		ReleaseOnCancel: true,
		Name:            e.Namespace + "/" + e.Name,
		Callbacks: leaderelection.LeaderCallbacks{
			OnStartedLeading: func(leadCtx context.Context) { w.lead(leadCtx) },
			OnStoppedLeading: func() { w.log.Info("stopped writing status: not the leader", "identity", e.Identity) },
			OnNewLeader: func(identity string) {
				w.log.Info("status writer leader", "leader", identity, "me", identity == e.Identity)
			},
		},
	}
	elector, err := leaderelection.NewLeaderElector(cfg)
	if err != nil {
		return err
	}
	for ctx.Err() == nil {
		elector.Run(ctx)
		select {
		case <-ctx.Done():
		case <-time.After(e.RetryPeriod):
		}
	}
	return nil
}
