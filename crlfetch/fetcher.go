package crlfetch

import (
	"bytes"
	"context"
	"net/http"
	"net/url"
	"slices"
	"sort"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/tlsplane/tlsplane/translator"
	"github.com/tlsplane/tlsplane/translator/input"
)

// Defaults of Config.
const (
	DefaultMaxBytes        = 10 << 20
	DefaultTimeout         = 10 * time.Second
	DefaultRefreshInterval = time.Hour
	DefaultMaxURLs         = 256
	// maxRetryDelay bounds the first retry after a failure: it doubles up
	// to the refresh interval.
	maxRetryDelay = 10 * time.Second
)

// Config bounds the fetcher.
type Config struct {
	Allowed         Allowed
	MaxBytes        int64         // the largest body read; DefaultMaxBytes when zero
	Timeout         time.Duration // of one fetch, redirects included; DefaultTimeout when zero
	RefreshInterval time.Duration // the longest a good list is kept unrefreshed; DefaultRefreshInterval when zero
	// MaxURLs bounds the distribution points fetched: the first in URL
	// order are, the others get an error. DefaultMaxURLs when zero.
	MaxURLs   int
	Transport http.RoundTripper // nil: a clone of http.DefaultTransport
	Now       func() time.Time  // nil: time.Now
}

// point is one wanted distribution point.
type point struct {
	cas  [][]byte
	list *input.FetchedCRL // published; nil before the first attempt
	// next is the next attempt; failures counts attempts failed in a row.
	next     time.Time
	failures int
	// fetchedAt is the last good fetch, for the age metric and status.
	fetchedAt time.Time
}

// Fetcher keeps the wanted lists fresh. Its methods are safe from any
// goroutine.
type Fetcher struct {
	cfg     Config
	client  *http.Client
	metrics *metrics

	mu      sync.Mutex
	points  map[string]*point
	pending map[string]bool // URLs whose list changed since Changes
	changed func()          // Run's
	wake    chan struct{}
}

// New returns a fetcher; nothing is fetched until Run, and then only what
// Want names. reg may be nil.
func New(cfg Config, reg prometheus.Registerer) *Fetcher {
	if cfg.MaxBytes <= 0 {
		cfg.MaxBytes = DefaultMaxBytes
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = DefaultTimeout
	}
	if cfg.RefreshInterval <= 0 {
		cfg.RefreshInterval = DefaultRefreshInterval
	}
	if cfg.MaxURLs <= 0 {
		cfg.MaxURLs = DefaultMaxURLs
	}
	if cfg.Transport == nil {
		cfg.Transport = http.DefaultTransport.(*http.Transport).Clone()
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	f := &Fetcher{cfg: cfg, client: newClient(cfg.Transport, cfg.Allowed, cfg.Timeout),
		points: map[string]*point{}, pending: map[string]bool{}, wake: make(chan struct{}, 1)}
	f.metrics = newMetrics(f, reg)
	return f
}

// Want sets the distribution points to keep fresh (a translation's
// Output.CRLDistributionPoints: URL → the CA certificates one of which
// must sign the list). A URL no longer wanted is forgotten at once.
func (f *Fetcher) Want(points map[string][][]byte) {
	f.mu.Lock()
	defer f.mu.Unlock()
	now, kick := f.cfg.Now(), false
	for u, p := range f.points {
		if _, ok := points[u]; !ok {
			delete(f.points, u)
			if p.list != nil {
				f.pending[u] = true
			}
			kick = true
		}
	}
	for u, cas := range points {
		p := f.points[u]
		if p == nil {
			f.points[u] = &point{cas: cas, next: now}
			kick = true
			continue
		}
		if !slices.EqualFunc(p.cas, cas, bytes.Equal) {
			// Other CAs: the kept list must be verified against them.
			p.cas, p.next, kick = cas, now, true
		}
	}
	if kick {
		f.signal()
	}
}

// signal wakes Run.
func (f *Fetcher) signal() {
	select {
	case f.wake <- struct{}{}:
	default:
	}
}

// Lists are the current lists of the wanted points, by URL.
func (f *Fetcher) Lists() []*input.FetchedCRL {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []*input.FetchedCRL
	for _, p := range f.points {
		if p.list != nil {
			out = append(out, p.list)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// Changes are the lists that changed (or were forgotten) since the last
// call, as translator changes.
func (f *Fetcher) Changes() []translator.Change {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []translator.Change
	for _, u := range sortedKeys(f.pending) {
		c := translator.Change{Kind: translator.KindFetchedCRL, Key: types.NamespacedName{Name: u}}
		if p := f.points[u]; p != nil && p.list != nil {
			c.Object = p.list
		}
		out = append(out, c)
	}
	clear(f.pending)
	return out
}

// Run fetches what is due until ctx ends, calling changed (the pipeline's
// signal) after a list or its error changed.
func (f *Fetcher) Run(ctx context.Context, changed func()) {
	f.mu.Lock()
	f.changed = changed
	f.mu.Unlock()
	timer := time.NewTimer(0)
	defer timer.Stop()
	for {
		next, ok := f.Step(ctx)
		timer.Stop()
		if ok {
			timer.Reset(max(next.Sub(f.cfg.Now()), 0))
		}
		select {
		case <-ctx.Done():
			return
		case <-f.wake:
		case <-timer.C:
		}
	}
}

// Step makes every attempt due now, marks lists past their nextUpdate, and
// returns when the next is due (false: nothing is wanted). Run calls it;
// tests call it with a clock of theirs.
func (f *Fetcher) Step(ctx context.Context) (time.Time, bool) {
	f.mu.Lock()
	now := f.cfg.Now()
	urls := sortedKeys(f.points)
	type attempt struct {
		url string
		cas [][]byte
	}
	var due []attempt
	for i, u := range urls {
		p := f.points[u]
		if i >= f.cfg.MaxURLs {
			f.fail(u, p, now, failed(outcomeNotAllowed, "more than %d distribution points are wanted; this one is not fetched", f.cfg.MaxURLs))
			continue
		}
		if !now.Before(p.next) {
			due = append(due, attempt{u, p.cas})
		}
	}
	f.mu.Unlock()
	for _, a := range due {
		der, list, err := f.fetch(ctx, a.url, a.cas)
		f.metrics.fetches.WithLabelValues(outcomeOf(err)).Inc()
		f.mu.Lock()
		if p := f.points[a.url]; p != nil && slices.EqualFunc(p.cas, a.cas, bytes.Equal) {
			if err == nil {
				err = f.keep(a.url, p, der, list, f.cfg.Now())
			}
			if err != nil {
				f.fail(a.url, p, f.cfg.Now(), err)
			}
		}
		f.mu.Unlock()
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	now = f.cfg.Now()
	var next time.Time
	for _, p := range f.points {
		if l := p.list; l != nil && l.DER != nil && !l.Expired && !l.NextUpdate.IsZero() {
			if !now.Before(l.NextUpdate) {
				expired := *l
				expired.Expired = true
				if expired.Error == "" {
					expired.Error, expired.ErrorSince = "no newer list was fetched", now
				}
				f.publish(&expired, p)
			} else if next.IsZero() || l.NextUpdate.Before(next) {
				next = l.NextUpdate
			}
		}
		if next.IsZero() || p.next.Before(next) {
			next = p.next
		}
	}
	if len(f.pending) > 0 && f.changed != nil {
		f.changed()
	}
	return next, len(f.points) > 0
}

// fetch gets and verifies one list; it makes no request for a URL whose
// scheme and host are not allowed.
func (f *Fetcher) fetch(ctx context.Context, raw string, cas [][]byte) ([]byte, *listTimes, error) {
	u, err := url.Parse(raw)
	if err != nil || !f.cfg.Allowed.Allows(u) {
		return nil, nil, failed(outcomeNotAllowed, "the scheme and host of %s are not in %s", raw, AllowFlag)
	}
	ctx, cancel := context.WithTimeout(ctx, f.cfg.Timeout)
	defer cancel()
	body, err := get(ctx, f.client, raw, f.cfg.MaxBytes, f.cfg.Timeout)
	if err != nil {
		return nil, nil, err
	}
	der, list, err := verify(body, cas)
	if err != nil {
		return nil, nil, err
	}
	return der, &listTimes{thisUpdate: list.ThisUpdate, nextUpdate: list.NextUpdate}, nil
}

type listTimes struct{ thisUpdate, nextUpdate time.Time }

// keep makes a verified list the last good one, unless it is older than
// that (a replayed list would undo revocations).
func (f *Fetcher) keep(u string, p *point, der []byte, t *listTimes, now time.Time) error {
	if !t.nextUpdate.IsZero() && !now.Before(t.nextUpdate) {
		// Envoy would refuse every certificate of the CA with it.
		return failed(outcomeInvalid, "the list's nextUpdate %s has passed", stamp(t.nextUpdate))
	}
	if old := p.list; old != nil && old.DER != nil && t.thisUpdate.Before(old.ThisUpdate) {
		return failed(outcomeOlder, "the list's thisUpdate %s is older than the last good list's %s", stamp(t.thisUpdate), stamp(old.ThisUpdate))
	}
	p.failures, p.fetchedAt = 0, now
	p.next = f.refreshAt(t.thisUpdate, t.nextUpdate, now)
	if old := p.list; old != nil && bytes.Equal(old.DER, der) && old.Error == "" && !old.Expired {
		return nil // the same list again: nothing the translator reads changed
	}
	f.publish(&input.FetchedCRL{ObjectMeta: metav1.ObjectMeta{Name: u}, DER: der, FetchedAt: now,
		ThisUpdate: t.thisUpdate, NextUpdate: t.nextUpdate, RefreshAt: p.next}, p)
	return nil
}

// refreshAt is when a list fetched at now is fetched again: a tenth of its
// validity before its nextUpdate, and at most RefreshInterval later, but
// never sooner than the first retry delay (a list nearly expired when
// issued must not be fetched in a loop).
func (f *Fetcher) refreshAt(thisUpdate, nextUpdate, now time.Time) time.Time {
	at := now.Add(f.cfg.RefreshInterval)
	if !nextUpdate.IsZero() {
		if early := nextUpdate.Add(-nextUpdate.Sub(thisUpdate) / 10); early.Before(at) {
			at = early
		}
	}
	if soonest := now.Add(f.retryDelay(1)); at.Before(soonest) {
		at = soonest
	}
	return at
}

// retryDelay is the wait after the n-th failure in a row: doubling from
// the smaller of 10s and the refresh interval, up to the interval.
func (f *Fetcher) retryDelay(n int) time.Duration {
	d := min(maxRetryDelay, f.cfg.RefreshInterval)
	for i := 1; i < n && d < f.cfg.RefreshInterval; i++ {
		d *= 2
	}
	return min(d, f.cfg.RefreshInterval)
}

// fail records a failed attempt; the last good list stays.
func (f *Fetcher) fail(u string, p *point, now time.Time, err error) {
	p.failures++
	p.next = now.Add(f.retryDelay(p.failures))
	l := &input.FetchedCRL{ObjectMeta: metav1.ObjectMeta{Name: u}}
	if p.list != nil {
		copied := *p.list
		l = &copied
	}
	if l.Error == err.Error() {
		return // the same failure again: nothing the translator reads changed
	}
	if l.Error == "" {
		l.ErrorSince = now
	}
	l.Error = err.Error()
	f.publish(l, p)
}

// publish makes l p's list and notes the change.
func (f *Fetcher) publish(l *input.FetchedCRL, p *point) {
	p.list = l
	f.pending[l.Name] = true
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// stamp prints a time for a message: UTC, seconds.
func stamp(t time.Time) string { return t.UTC().Format(time.RFC3339) }
