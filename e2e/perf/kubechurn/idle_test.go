package kubechurn

import (
	"cmp"
	"context"
	"errors"
	"flag"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tlsplane/tlsplane/e2e/harness"
)

var (
	idleEdits     = flag.Int("idle.edits", 150, "edits of BenchmarkIdleEdits, in turn a CA rotation, a policy edit and an EndpointSlice change, each on another Service")
	idleQuiet     = flag.Duration("idle.quiet", 150*time.Millisecond, "quiet before each edit, longer than tlsplane's quiet period (100 ms): an idle world, one edit at a time")
	idleFirstRead = flag.Duration("idle.firstread", 100*time.Millisecond, "wait this long after an edit's API call before reading Envoy's stats: each read holds Envoy's main thread, which applies xDS (14-28 ms a read at 10,000 clusters), and Envoy's own update_time stamps say when it applied the edit however late they are read")
	idlePoll      = flag.Duration("idle.poll", 2*time.Millisecond, "least interval between reads of Envoy's stats while an edit propagates (and at least as long as the last read took)")
	idlePatience  = flag.Duration("idle.patience", 10*time.Second, "bound on one edit reaching Envoy, and on its policy's status being written")
)

// idleKinds are the edits of BenchmarkIdleEdits, in turn: a CA rotation
// (the CA ConfigMap holds another CA), a policy edit (validation.hostname)
// and an EndpointSlice change (an endpoint moves to another address).
var idleKinds = []string{"ca", "policy", "endpoint"}

// idleService is the Service edit e changes among n: spread over them,
// known before the run (7919 is prime: n edits touch n Services).
func idleService(e, n int) int { return (e * 7919) % n }

// BenchmarkIdleEdits/kube: -churn.services Services with policies in a
// real kube-apiserver, the tlsplane binary in Kubernetes mode, a real
// delta Envoy; then -idle.edits edits, one at a time, each after a quiet
// spell (-idle.quiet) longer than tlsplane's quiet period: an idle world,
// where a change comes alone and tlsplane publishes it at once. An
// operation is the whole series.
//
// Each edit is timed from just before its API call to Envoy applying it,
// by Envoy's own update_time stamps (ms since the epoch, whole
// milliseconds): the SDS secret's for a CA rotation, the cluster's load
// assignment's for an EndpointSlice change, and for a policy edit the later
// of the CDS update's and the cluster's load assignment's (Envoy replaces
// the cluster and warms it). Polling Envoy's stats only says that the stamp
// is there to read.
//
// Per kind (ca, policy, endpoint): p50-<kind>-ms, p99-<kind>-ms,
// max-<kind>-ms and edits-<kind>; and where an edit's time goes, as means
// per edit: tlsplane-<kind>-ms is tlsplane's own waiting and compute in
// the edit's passes (its histograms below), delivered-<kind>-ms the time
// from the API call to the API server's watch event reaching a watcher of
// the benchmark's own (as it reaches tlsplane's informers; an
// approximation from another process),
// published-<kind>-ms to tlsplane's log saying it published, and
// envoy-<kind>-ms from that publish to Envoy's stamp (published and envoy
// are whole milliseconds, like the stamps, and add up to the latency).
// wait-ms, translate-ms and publish-ms are tlsplane's means per pass over
// the passes between each edit's quiet spell and Envoy applying it
// (tlsplane_change_wait_seconds, tlsplane_translation_duration_seconds,
// tlsplane_snapshot_publish_duration_seconds), never the initial sync;
// passes/edit is how many there were.
//
// Needs tlsplane, Envoy and the API server binaries (make
// kube-apiserver); skips without them, fails under CI=true.
func BenchmarkIdleEdits(b *testing.B) {
	b.Run(fmt.Sprintf("kube/services=%d", *churnServices), func(b *testing.B) {
		benchmarkIdleEdits(b, *churnServices, *idleEdits)
	})
}

// idleEdit is one edit of the series: what it changes and how Envoy shows
// it applied.
type idleEdit struct {
	kind    string
	service int
	// stats are read before and while the edit propagates; done says,
	// from the reads before and now, that Envoy applied it; stamps are the
	// update_time gauges whose latest is when.
	stats  []watchedStat
	done   func(before, now map[string]int64) bool
	stamps []string
}

func newIdleEdit(e, n int) idleEdit {
	i := idleService(e, n)
	ed := idleEdit{kind: idleKinds[e%len(idleKinds)], service: i}
	cluster := clusterName(i)
	switch ed.kind {
	case "ca":
		// Envoy applies the new SDS secret; the cluster refers to it by
		// name and does not change.
		success, stamp := secretStat(caSecretName(i), "update_success"), secretStat(caSecretName(i), "update_time")
		ed.stats, ed.stamps = []watchedStat{success, stamp}, []string{stamp.stat}
		ed.done = func(before, now map[string]int64) bool { return now[success.stat] > before[success.stat] }
	case "policy":
		// Envoy replaces the cluster and warms it: applied when both its
		// CDS update and its load assignment are, nothing warming.
		modified, warming := managerStat("cluster_modified"), managerStat("warming_clusters")
		cds, eds := managerStat("cds.update_time"), clusterStat(cluster, "update_time")
		ed.stats, ed.stamps = []watchedStat{modified, warming, cds, eds}, []string{cds.stat, eds.stat}
		ed.done = func(before, now map[string]int64) bool {
			return now[modified.stat] > before[modified.stat] && now[warming.stat] == 0
		}
	default:
		// Envoy applies the cluster's new load assignment.
		success, stamp := clusterStat(cluster, "update_success"), clusterStat(cluster, "update_time")
		ed.stats, ed.stamps = []watchedStat{success, stamp}, []string{stamp.stat}
		ed.done = func(before, now map[string]int64) bool { return now[success.stat] > before[success.stat] }
	}
	return ed
}

// editRecord is one edit's figures, in milliseconds.
type editRecord struct {
	// latency is from the API call to Envoy's update_time stamp; polled
	// to the read of Envoy's stats that saw the edit applied.
	latency, polled float64
	// call is the API call's own round trip.
	call float64
	// own is tlsplane's waiting and compute in the edit's passes.
	own float64
	// published is from the API call to tlsplane's log saying it
	// published (whole milliseconds, like Envoy's stamps: published and
	// envoy add up to latency); split is false when no publish was logged.
	published, envoy float64
	split            bool
	// delivered is from the API call to the API server's watch event
	// reaching a watcher of the benchmark's (as it reaches tlsplane's
	// informers; on a loaded machine the benchmark's process may see it a
	// few ms after tlsplane did); watched is false when none did.
	delivered float64
	watched   bool
}

// kindFigures are one kind's edits and tlsplane's passes in their windows.
type kindFigures struct {
	edits                    []editRecord
	wait, translate, publish histogram
	// status is, for policy edits, from the API call to the policy's
	// status observing the edit (polled every 10 ms).
	status []float64
}

// column is one figure of the edits that have it, sorted.
func (f *kindFigures) column(has func(editRecord) bool, of func(editRecord) float64) []float64 {
	var out []float64
	for _, r := range f.edits {
		if has == nil || has(r) {
			out = append(out, of(r))
		}
	}
	slices.Sort(out)
	return out
}

// The figures of an edit, and which edits have them.
var (
	latencyOf   = func(r editRecord) float64 { return r.latency }
	polledOf    = func(r editRecord) float64 { return r.polled }
	callOf      = func(r editRecord) float64 { return r.call }
	ownOf       = func(r editRecord) float64 { return r.own }
	deliveredOf = func(r editRecord) float64 { return r.delivered }
	publishedOf = func(r editRecord) float64 { return r.published }
	envoyOf     = func(r editRecord) float64 { return r.envoy }
	// toPublishOf is tlsplane's part: from the watch event to its publish.
	toPublishOf = func(r editRecord) float64 { return r.published - r.delivered }
	watched     = func(r editRecord) bool { return r.watched }
	split       = func(r editRecord) bool { return r.split }
	both        = func(r editRecord) bool { return r.watched && r.split }
)

func benchmarkIdleEdits(b *testing.B, n, edits int) {
	_, envoyBin := binaries(b)
	if edits < len(idleKinds) {
		b.Fatalf("-idle.edits=%d: at least one of each kind (%d)", edits, len(idleKinds))
	}
	ctx := context.Background()
	s := startWorld(b, n)
	w, tp := s.w, s.tp

	plan := make([]idleEdit, edits)
	var clusters, secrets []string
	for e := range plan {
		plan[e] = newIdleEdit(e, n)
		if plan[e].kind == "ca" {
			secrets = append(secrets, caSecretName(plan[e].service))
		} else {
			clusters = append(clusters, clusterName(plan[e].service))
		}
	}
	envoy := startStatsEnvoy(b, envoyBin, s.logDir, tp.XDSAddress(), clusters, secrets)
	var present []watchedStat
	for _, c := range clusters {
		present = append(present, clusterStat(c, "update_success"))
	}
	for _, sec := range secrets {
		present = append(present, secretStat(sec, "update_success"))
	}
	// Served: every cluster active in Envoy and none warming, every edited
	// secret and cluster applied once, every policy's status written (the
	// status writer's requests would otherwise land among the edits).
	if err := harness.Eventually(*churnSetup, time.Second, func() error {
		if tp.Exited() || envoy.Exited() {
			return errors.New("tlsplane or Envoy exited")
		}
		active, warming, err := envoyClusters(envoy)
		if err != nil {
			return err
		}
		if active < int64(n+1) || warming != 0 {
			return fmt.Errorf("Envoy: %d clusters active, %d warming, want at least %d and 0", active, warming, n+1)
		}
		got, err := readStats(envoy, present)
		if err != nil {
			return err
		}
		for _, st := range present {
			if got[st.stat] < 1 {
				return fmt.Errorf("Envoy has not applied %s", st.stat)
			}
		}
		withStatus, err := w.policiesWithStatus(s.setup)
		if err != nil {
			return err
		}
		if withStatus != n {
			return fmt.Errorf("%d of %d policies have a status", withStatus, n)
		}
		return nil
	}); err != nil {
		b.Fatalf("not served: %v\n--- tlsplane:\n%s\n--- envoy:\n%s", err, tp.LogTail(30), envoy.LogTail(30))
	}
	b.Logf("served (Envoy's %d clusters and the edited secrets, every status) %s after tlsplane started", n, time.Since(s.tlsplaneStarted).Round(time.Millisecond))

	cas := [2]string{w.caPEM, string(harness.NewAuthority(b, "kubechurn CA two").PEM)}
	caOf := make([]int, n)    // which of cas Service i's ConfigMap holds
	hostGen := make([]int, n) // Service i's policy's hostname generation
	figures := map[string]*kindFigures{}
	for _, k := range idleKinds {
		figures[k] = &kindFigures{}
	}
	var inWindows histogram // the edits' passes (by the wait histogram)
	published := &publishLog{path: tp.LogPath}
	watchCtx, stopWatching := context.WithCancel(ctx)
	defer stopWatching()
	delivered, err := watchDeliveries(watchCtx, w)
	if err != nil {
		b.Fatal(err)
	}
	first, err := tlsplaneMetrics(tp)
	if err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for range b.N {
		for e, ed := range plan {
			f := figures[ed.kind]
			i := ed.service
			// tlsplane's figures and Envoy's stats before the quiet spell,
			// so that reading them is not in the edit's way.
			m0, err := tlsplaneMetrics(tp)
			if err != nil {
				b.Fatal(err)
			}
			before, err := readStats(envoy, ed.stats)
			if err != nil {
				b.Fatal(err)
			}
			if err := published.mark(); err != nil {
				b.Fatal(err)
			}
			for _, st := range ed.stats {
				if _, ok := before[st.stat]; !ok {
					b.Fatalf("edit %d: Envoy's stats have no %s (sample %s): %v", e, st.stat, st.sample, before)
				}
			}
			time.Sleep(*idleQuiet)

			var rv string
			sent := time.Now()
			switch ed.kind {
			case "ca":
				caOf[i] = 1 - caOf[i]
				rv, err = w.rotateCA(ctx, i, cas[caOf[i]])
			case "policy":
				hostGen[i]++
				rv, err = w.setHostname(ctx, i, hostname(i, hostGen[i]))
			default:
				w.gens[i]++
				rv, err = w.update(ctx, i, w.gens[i])
			}
			call := time.Since(sent)
			if err != nil {
				b.Fatalf("edit %d: %v", e, err)
			}

			now, applied, err := awaitApplied(envoy, tp, ed, before, sent)
			if err != nil {
				b.Fatalf("edit %d (%s, Service %d): %v\n--- tlsplane:\n%s\n--- envoy:\n%s", e, ed.kind, i, err, tp.LogTail(20), envoy.LogTail(20))
			}
			polledMs := msBetween(sent, applied)
			// Envoy's record of when it applied the edit, to the
			// millisecond: the polling only bounds it from above.
			var at int64
			for _, st := range ed.stamps {
				at = max(at, now[st])
			}
			ms := float64(at - sent.UnixMilli())
			if at == 0 || ms > polledMs+1 {
				b.Fatalf("edit %d (%s): Envoy's update_time stamps %v (%v) disagree with the edit seen applied %.1f ms after it", e, ed.kind, ed.stamps, now, polledMs)
			}
			ms = max(ms, 0) // the stamp's millisecond began before the call
			m1, err := tlsplaneMetrics(tp)
			if err != nil {
				b.Fatal(err)
			}
			wait := histogramOf(m1, changeWaitSeconds).minus(histogramOf(m0, changeWaitSeconds))
			translate := histogramOf(m1, translationSeconds).minus(histogramOf(m0, translationSeconds))
			publish := histogramOf(m1, publishSeconds).minus(histogramOf(m0, publishSeconds))
			r := editRecord{latency: ms, polled: polledMs, call: float64(call.Microseconds()) / 1000,
				own: (wait.sum + translate.sum + publish.sum) * 1000}
			if pub, ok, err := published.next(); err != nil {
				b.Fatal(err)
			} else if ok {
				r.split = true
				r.published = float64(pub.UnixMilli() - sent.UnixMilli())
				r.envoy = float64(at - pub.UnixMilli())
			}
			if at, ok := delivered.of(rv, time.Second); ok {
				r.delivered, r.watched = msBetween(sent, at), true
			}
			f.edits = append(f.edits, r)
			f.wait, f.translate, f.publish = f.wait.add(wait), f.translate.add(translate), f.publish.add(publish)
			inWindows = inWindows.add(wait)

			if ed.kind == "policy" {
				// The status write, and its echo through the watch, before
				// the next edit's quiet spell.
				if err := harness.Eventually(*idlePatience, 10*time.Millisecond, func() error {
					current, err := w.statusCurrent(ctx, i)
					if err == nil && !current {
						err = errors.New("not written")
					}
					return err
				}); err != nil {
					b.Logf("edit %d: policy %s/%s-tls: status: %v", e, namespaceOf(i), serviceName(i), err)
				} else {
					f.status = append(f.status, msBetween(sent, time.Now()))
				}
			}
		}
	}
	b.StopTimer()
	last, err := tlsplaneMetrics(tp)
	if err != nil {
		b.Fatal(err)
	}

	var allTranslate, allPublish histogram // the edits' passes, every kind
	for _, k := range idleKinds {
		allTranslate, allPublish = allTranslate.add(figures[k].translate), allPublish.add(figures[k].publish)
	}
	outside := histogramOf(last, changeWaitSeconds).minus(histogramOf(first, changeWaitSeconds)).count - inWindows.count
	for _, k := range idleKinds {
		f := figures[k]
		l := f.column(nil, latencyOf)
		b.ReportMetric(fpercentile(l, 50), "p50-"+k+"-ms")
		b.ReportMetric(fpercentile(l, 99), "p99-"+k+"-ms")
		b.ReportMetric(fpercentile(l, 100), "max-"+k+"-ms")
		b.ReportMetric(float64(len(l)), "edits-"+k)
		// Means: tlsplane's own waiting and compute per edit; from the
		// API call to the API server's watch event and to tlsplane's
		// publish; from that publish to Envoy's stamp.
		b.ReportMetric(fmean(f.column(nil, ownOf)), "tlsplane-"+k+"-ms")
		b.ReportMetric(fmean(f.column(watched, deliveredOf)), "delivered-"+k+"-ms")
		b.ReportMetric(fmean(f.column(split, publishedOf)), "published-"+k+"-ms")
		b.ReportMetric(fmean(f.column(split, envoyOf)), "envoy-"+k+"-ms")
	}
	b.ReportMetric(inWindows.meanMs(), "wait-ms")
	b.ReportMetric(allTranslate.meanMs(), "translate-ms")
	b.ReportMetric(allPublish.meanMs(), "publish-ms")
	b.ReportMetric(inWindows.count/float64(edits*b.N), "passes/edit")

	// Two lines a kind: a benchmark's log keeps its first ten.
	pp := func(v []float64) string {
		return fmt.Sprintf("mean %.1f, p50 %.1f, p99 %.1f ms", fmean(v), fpercentile(v, 50), fpercentile(v, 99))
	}
	for _, k := range idleKinds {
		f := figures[k]
		l, p, c := f.column(nil, latencyOf), f.column(nil, polledOf), f.column(nil, callOf)
		edits := float64(max(len(l), 1))
		b.Logf("services=%d %s: %d edits, p50 %.1f ms p99 %.1f ms max %.1f ms mean %.1f ms (polled: p50 %.1f ms p99 %.1f ms); the API call %s. "+
			"Split (%d edits): the API server's watch event %s; then tlsplane to its publish %s; then Envoy %s. "+
			"tlsplane's own per edit: waiting %.3f ms, computing %.2f ms (%.1f passes/edit; translate %.2f ms, publish %.2f ms per pass)",
			n, k, len(l), fpercentile(l, 50), fpercentile(l, 99), fpercentile(l, 100), fmean(l), fpercentile(p, 50), fpercentile(p, 99), pp(c),
			len(f.column(both, latencyOf)), pp(f.column(both, deliveredOf)), pp(f.column(both, toPublishOf)), pp(f.column(both, envoyOf)),
			f.wait.sum*1000/edits, (f.translate.sum+f.publish.sum)*1000/edits, f.wait.count/edits, f.translate.meanMs(), f.publish.meanMs())
		// The slowest edits, split: where the tail comes from.
		slow := slices.Clone(f.edits)
		slices.SortFunc(slow, func(a, b editRecord) int { return cmp.Compare(b.latency, a.latency) })
		var worst []string
		for _, r := range slow[:min(3, len(slow))] {
			worst = append(worst, fmt.Sprintf("%.0f ms (call %.1f, watch event %.1f, published %.0f, Envoy %.0f; tlsplane's own %.2f)",
				r.latency, r.call, r.delivered, r.published, r.envoy, r.own))
		}
		status := ""
		if len(f.status) > 0 {
			st := slices.Sorted(slices.Values(f.status))
			status = fmt.Sprintf("; the policy's status observed the edit p50 %.0f ms p99 %.0f ms after the call", fpercentile(st, 50), fpercentile(st, 99))
		}
		b.Logf("services=%d %s: slowest %s%s", n, k, strings.Join(worst, "; "), status)
	}
	b.Logf("services=%d: tlsplane per pass over the edits: wait %.3f ms, translate %.2f ms, publish %.2f ms; %.0f passes in the edits' windows, %.0f outside them (status echoes, resyncs); load %s",
		n, inWindows.meanMs(), allTranslate.meanMs(), allPublish.meanMs(), inWindows.count, outside, loadAverage())
}

// awaitApplied reads Envoy's stats until ed is applied, the first read
// -idle.firstread after sent, each next one no sooner than the last took
// (so the reads leave Envoy's main thread free at least half the time).
// It returns the read that saw it applied and when that read ended.
func awaitApplied(envoy *statsEnvoy, tp *harness.TLSPlane, ed idleEdit, before map[string]int64, sent time.Time) (map[string]int64, time.Time, error) {
	time.Sleep(time.Until(sent.Add(*idleFirstRead)))
	deadline := sent.Add(*idlePatience)
	for {
		asked := time.Now()
		now, err := readStats(envoy, ed.stats)
		took := time.Since(asked)
		if err == nil && ed.done(before, now) {
			return now, time.Now(), nil
		}
		switch {
		case envoy.Exited():
			return nil, time.Time{}, errors.New("Envoy exited")
		case tp.Exited():
			return nil, time.Time{}, errors.New("tlsplane exited")
		case asked.After(deadline):
			return nil, time.Time{}, fmt.Errorf("not applied within %s: stats before %v, last read %v (%v)", *idlePatience, before, now, err)
		}
		time.Sleep(max(*idlePoll, took))
	}
}

func msBetween(from, to time.Time) float64 { return float64(to.Sub(from).Microseconds()) / 1000 }

// fpercentile is the nearest-rank percentile of sorted values; 0 for none.
func fpercentile(sorted []float64, p int) float64 {
	if len(sorted) == 0 {
		return 0
	}
	rank := (p*len(sorted) + 99) / 100
	return sorted[max(rank, 1)-1]
}

func fmean(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	var s float64
	for _, x := range v {
		s += x
	}
	return s / float64(len(v))
}
