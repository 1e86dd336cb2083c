package kube

import (
	"context"
	"fmt"
	"maps"
	"math/rand/v2"
	"net"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	clusterv3 "github.com/envoyproxy/go-control-plane/envoy/config/cluster/v3"
	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	endpointv3 "github.com/envoyproxy/go-control-plane/envoy/config/endpoint/v3"
	tlsv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/transport_sockets/tls/v3"
	discoveryv3 "github.com/envoyproxy/go-control-plane/envoy/service/discovery/v3"
	"google.golang.org/genproto/googleapis/rpc/status"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/protobuf/types/known/anypb"

	"github.com/tlsplane/tlsplane/e2e/harness"
)

// Envoy's retry of a failed ADS stream (SubscriptionFactory::RetryInitialDelayMs
// and RetryMaxDelayMs, JitteredExponentialBackOffStrategy): the n-th retry
// waits uniformly in [0, 500 ms·2ⁿ⁻¹), the interval capped at 30 s, and a
// stream that receives a response starts again from 500 ms.
const (
	envoyRetryBase = 500 * time.Millisecond
	envoyRetryMax  = 30 * time.Second
)

type envoyBackoff struct{ next time.Duration }

func (b *envoyBackoff) reset() { b.next = envoyRetryBase }

func (b *envoyBackoff) delay() time.Duration {
	d := b.next
	b.next = min(2*b.next, envoyRetryMax)
	return time.Duration(rand.Int64N(int64(d)))
}

// stormWorld is what every client must hold for its snapshot to be
// complete: exactly these clusters, each reading a load assignment with
// endpoints and its CA secret, which holds exactly the PEM given.
type stormWorld struct {
	gen      int
	clusters map[string]string // cluster → the CA secret it must read
	cas      map[string]string // CA secret → its PEM
	// rotated is a secret whose old PEM, once a client held the new one,
	// must never come back (a replica serving a stale snapshot).
	rotated, oldPEM string
}

// heldCluster is what a client keeps of a cluster: the names it reads.
type heldCluster struct {
	eds     string
	secrets []string // sorted
}

func (h heldCluster) equal(o heldCluster) bool {
	return h.eds == o.eds && slices.Equal(h.secrets, o.secrets)
}

// stormClient is one simulated Envoy of TestReconnectStorm: its own
// connection and one ADS stream (SotW or delta), wildcard CDS, then EDS and
// SDS for exactly the names the clusters read, as Envoy subscribes; every
// response is ACKed and merged into what the client holds, kept across
// reconnections as Envoy keeps it. On a stream error it waits Envoy's
// jittered backoff and connects to the next address.
type stormClient struct {
	id     int
	delta  bool
	node   *corev3.Node
	addrs  []string
	target *atomic.Pointer[stormWorld]

	mu       sync.Mutex
	addr     string // of the current stream, "" between streams
	attempts int    // streams opened, the first included
	lastErr  error
	clusters map[string]heldCluster
	eds      map[string]int    // load assignment → endpoints
	secrets  map[string]string // secret → trusted CA PEM
	// versions: per resource for delta (type → name → version), the
	// accepted version per type for SotW (type → "" → version).
	versions map[string]map[string]string
	// subscribed EDS and SDS names, sorted; SotW nonces of this stream.
	subscribed map[string][]string
	nonces     map[string]string
	sawRotated bool

	// doneGen is the last world this client held completely, at doneAt,
	// over the stream to doneAddr; its current stream was opened at
	// openedAt and first answered at respondedAt.
	doneGen     int
	doneAt      time.Time
	doneAddr    string
	openedAt    time.Time
	respondedAt time.Time
	violations  []string
}

func newStormClient(id int, delta bool, addrs []string, target *atomic.Pointer[stormWorld]) *stormClient {
	kind := "sotw"
	if delta {
		kind = "delta"
	}
	return &stormClient{
		id: id, delta: delta, addrs: addrs, target: target,
		node:     &corev3.Node{Id: fmt.Sprintf("storm-%s-%04d", kind, id), Cluster: "storm"},
		clusters: map[string]heldCluster{}, eds: map[string]int{}, secrets: map[string]string{},
		versions:   map[string]map[string]string{harness.ClusterType: {}, harness.EndpointType: {}, harness.SecretType: {}},
		subscribed: map[string][]string{},
	}
}

// dialFromOwnAddress dials from the client's own loopback address, as
// each Envoy of a fleet dials from its own Pod IP: tlsplane bounds the
// connections of one source address (--xds-max-connections-per-source),
// which a thousand clients sharing 127.0.0.1 would all count against.
func (c *stormClient) dialFromOwnAddress(ctx context.Context, addr string) (net.Conn, error) {
	own := net.IPv4(127, 1, byte(c.id/250), byte(c.id%250+1))
	d := net.Dialer{LocalAddr: &net.TCPAddr{IP: own}}
	return d.DialContext(ctx, "tcp", addr)
}

// run connects to addrs in turn until ctx ends: the first stream to
// addrs[0], each retry after Envoy's backoff to the next address.
func (c *stormClient) run(ctx context.Context) {
	var b envoyBackoff
	b.reset()
	for i := 0; ctx.Err() == nil; i++ {
		err := c.stream(ctx, c.addrs[i%len(c.addrs)], &b)
		c.mu.Lock()
		c.addr, c.lastErr = "", err
		c.mu.Unlock()
		select {
		case <-ctx.Done():
		case <-time.After(b.delay()):
		}
	}
}

func (c *stormClient) stream(ctx context.Context, addr string, b *envoyBackoff) error {
	conn, err := grpc.NewClient("passthrough:///"+addr, grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithContextDialer(c.dialFromOwnAddress))
	if err != nil {
		return err
	}
	defer conn.Close()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	ads := discoveryv3.NewAggregatedDiscoveryServiceClient(conn)
	c.mu.Lock()
	c.attempts++
	c.addr, c.openedAt, c.respondedAt, c.nonces = addr, time.Now(), time.Time{}, map[string]string{}
	c.mu.Unlock()
	if c.delta {
		return c.deltaStream(ctx, ads, b)
	}
	return c.sotwStream(ctx, ads, b)
}

func (c *stormClient) sotwStream(ctx context.Context, ads discoveryv3.AggregatedDiscoveryServiceClient, b *envoyBackoff) error {
	s, err := ads.StreamAggregatedResources(ctx)
	if err != nil {
		return err
	}
	// Envoy's first requests on a new stream: every subscription with the
	// version it last accepted, clusters first.
	c.mu.Lock()
	reqs := []*discoveryv3.DiscoveryRequest{{Node: c.node, TypeUrl: harness.ClusterType, VersionInfo: c.versions[harness.ClusterType][""]}}
	for _, typ := range []string{harness.EndpointType, harness.SecretType} {
		if names := c.subscribed[typ]; len(names) > 0 {
			reqs = append(reqs, &discoveryv3.DiscoveryRequest{TypeUrl: typ, ResourceNames: names, VersionInfo: c.versions[typ][""]})
		}
	}
	c.mu.Unlock()
	for {
		for _, r := range reqs {
			if err := s.Send(r); err != nil {
				return err
			}
		}
		c.evaluate()
		resp, err := s.Recv()
		if err != nil {
			return err
		}
		b.reset()
		reqs = c.applySotw(resp)
	}
}

func (c *stormClient) deltaStream(ctx context.Context, ads discoveryv3.AggregatedDiscoveryServiceClient, b *envoyBackoff) error {
	s, err := ads.DeltaAggregatedResources(ctx)
	if err != nil {
		return err
	}
	// Envoy's first requests on a new stream: every subscription with the
	// versions it holds (initial_resource_versions), clusters first.
	c.mu.Lock()
	reqs := []*discoveryv3.DeltaDiscoveryRequest{{Node: c.node, TypeUrl: harness.ClusterType, InitialResourceVersions: maps.Clone(c.versions[harness.ClusterType])}}
	for _, typ := range []string{harness.EndpointType, harness.SecretType} {
		if names := c.subscribed[typ]; len(names) > 0 {
			reqs = append(reqs, &discoveryv3.DeltaDiscoveryRequest{TypeUrl: typ, ResourceNamesSubscribe: names, InitialResourceVersions: maps.Clone(c.versions[typ])})
		}
	}
	c.mu.Unlock()
	for {
		for _, r := range reqs {
			if err := s.Send(r); err != nil {
				return err
			}
		}
		c.evaluate()
		resp, err := s.Recv()
		if err != nil {
			return err
		}
		b.reset()
		reqs = c.applyDelta(resp)
	}
}

// applySotw merges a response and returns its ACK (or NACK) and, after
// clusters, the EDS and SDS requests for the names they now read.
func (c *stormClient) applySotw(resp *discoveryv3.DiscoveryResponse) []*discoveryv3.DiscoveryRequest {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.responded()
	typ := resp.GetTypeUrl()
	before := c.resolvedClusters()
	reply := &discoveryv3.DiscoveryRequest{TypeUrl: typ, ResponseNonce: resp.GetNonce(), ResourceNames: c.subscribed[typ]}
	c.nonces[typ] = resp.GetNonce()
	if typ == harness.ClusterType {
		clusters := map[string]heldCluster{}
		for _, r := range resp.GetResources() {
			name, h, err := decodeCluster(r)
			if err != nil {
				return []*discoveryv3.DiscoveryRequest{c.nack(reply, err)}
			}
			clusters[name] = h
		}
		c.clusters = clusters // state of the world: a cluster not sent is gone
	} else {
		for _, r := range resp.GetResources() {
			if err := c.store(typ, r); err != nil {
				return []*discoveryv3.DiscoveryRequest{c.nack(reply, err)}
			}
		}
	}
	c.versions[typ][""] = resp.GetVersionInfo()
	reply.VersionInfo = resp.GetVersionInfo()
	c.checkKept(before)
	out := []*discoveryv3.DiscoveryRequest{reply}
	if typ == harness.ClusterType {
		for _, sub := range c.resubscribe() {
			out = append(out, &discoveryv3.DiscoveryRequest{TypeUrl: sub.typ, ResourceNames: sub.names,
				VersionInfo: c.versions[sub.typ][""], ResponseNonce: c.nonces[sub.typ]})
		}
	}
	return out
}

func (c *stormClient) nack(reply *discoveryv3.DiscoveryRequest, err error) *discoveryv3.DiscoveryRequest {
	c.violate("NACK %s: %v", reply.TypeUrl, err)
	reply.VersionInfo = c.versions[reply.TypeUrl][""]
	reply.ErrorDetail = &status.Status{Code: 3, Message: err.Error()}
	return reply
}

// applyDelta merges a response and returns its ACK (or NACK) and, after
// clusters, the EDS and SDS subscription changes.
func (c *stormClient) applyDelta(resp *discoveryv3.DeltaDiscoveryResponse) []*discoveryv3.DeltaDiscoveryRequest {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.responded()
	typ := resp.GetTypeUrl()
	before := c.resolvedClusters()
	reply := &discoveryv3.DeltaDiscoveryRequest{TypeUrl: typ, ResponseNonce: resp.GetNonce()}
	for _, r := range resp.GetResources() {
		var err error
		if typ == harness.ClusterType {
			var h heldCluster
			if _, h, err = decodeCluster(r.GetResource()); err == nil {
				c.clusters[r.GetName()] = h
			}
		} else {
			err = c.store(typ, r.GetResource())
		}
		if err != nil {
			c.violate("NACK %s: %v", typ, err)
			reply.ErrorDetail = &status.Status{Code: 3, Message: err.Error()}
			return []*discoveryv3.DeltaDiscoveryRequest{reply}
		}
		c.versions[typ][r.GetName()] = r.GetVersion()
	}
	for _, name := range resp.GetRemovedResources() {
		c.forget(typ, name)
	}
	c.checkKept(before)
	out := []*discoveryv3.DeltaDiscoveryRequest{reply}
	if typ == harness.ClusterType {
		for _, sub := range c.resubscribe() {
			out = append(out, &discoveryv3.DeltaDiscoveryRequest{TypeUrl: sub.typ, ResourceNamesSubscribe: sub.added, ResourceNamesUnsubscribe: sub.removed})
		}
	}
	return out
}

func (c *stormClient) responded() {
	if c.respondedAt.IsZero() {
		c.respondedAt = time.Now()
	}
}

// store keeps one EDS or SDS resource.
func (c *stormClient) store(typ string, r *anypb.Any) error {
	switch typ {
	case harness.EndpointType:
		var cla endpointv3.ClusterLoadAssignment
		if err := r.UnmarshalTo(&cla); err != nil {
			return err
		}
		n := 0
		for _, l := range cla.GetEndpoints() {
			n += len(l.GetLbEndpoints())
		}
		c.eds[cla.GetClusterName()] = n
	case harness.SecretType:
		var s tlsv3.Secret
		if err := r.UnmarshalTo(&s); err != nil {
			return err
		}
		ca := s.GetValidationContext().GetTrustedCa()
		pem := ca.GetInlineString()
		if pem == "" {
			pem = string(ca.GetInlineBytes())
		}
		c.secrets[s.GetName()] = pem
		if w := c.target.Load(); s.GetName() == w.rotated {
			switch pem {
			case w.cas[w.rotated]:
				c.sawRotated = true
			case w.oldPEM:
				if c.sawRotated {
					c.violate("secret %s: back to the CA it held before the rotation", s.GetName())
				}
			}
		}
	default:
		return fmt.Errorf("type %s: not subscribed", typ)
	}
	return nil
}

func (c *stormClient) forget(typ, name string) {
	delete(c.versions[typ], name)
	switch typ {
	case harness.ClusterType:
		delete(c.clusters, name)
	case harness.EndpointType:
		delete(c.eds, name)
	case harness.SecretType:
		delete(c.secrets, name)
	}
}

// stormSubscription is a change of the EDS or SDS names a client reads.
type stormSubscription struct {
	typ                   string
	names, added, removed []string
}

// resubscribe sets the EDS and SDS subscriptions to the names the held
// clusters read, dropping what is no longer read, as Envoy does.
func (c *stormClient) resubscribe() []stormSubscription {
	want := map[string]map[string]bool{harness.EndpointType: {}, harness.SecretType: {}}
	for _, h := range c.clusters {
		if h.eds != "" {
			want[harness.EndpointType][h.eds] = true
		}
		for _, s := range h.secrets {
			want[harness.SecretType][s] = true
		}
	}
	var out []stormSubscription
	for _, typ := range []string{harness.EndpointType, harness.SecretType} {
		names := slices.Sorted(maps.Keys(want[typ]))
		old := c.subscribed[typ]
		if slices.Equal(names, old) {
			continue
		}
		sub := stormSubscription{typ: typ, names: names}
		for _, n := range names {
			if !slices.Contains(old, n) {
				sub.added = append(sub.added, n)
			}
		}
		for _, n := range old {
			if !want[typ][n] {
				sub.removed = append(sub.removed, n)
				c.forget(typ, n)
			}
		}
		c.subscribed[typ] = names
		out = append(out, sub)
	}
	return out
}

// resolvedClusters are the held clusters whose EDS and SDS resources are
// all held, with what they read.
func (c *stormClient) resolvedClusters() map[string]heldCluster {
	out := make(map[string]heldCluster, len(c.clusters))
	for name, h := range c.clusters {
		if c.resolves(h) == "" {
			out[name] = h
		}
	}
	return out
}

func (c *stormClient) resolves(h heldCluster) string {
	if h.eds == "" {
		return "reads no load assignment"
	}
	if _, ok := c.eds[h.eds]; !ok {
		return fmt.Sprintf("load assignment %q missing", h.eds)
	}
	for _, s := range h.secrets {
		if _, ok := c.secrets[s]; !ok {
			return fmt.Sprintf("secret %q missing", s)
		}
	}
	return ""
}

// checkKept: a cluster that was resolved and still reads the same names
// must stay resolved (a new or changed cluster may warm meanwhile).
func (c *stormClient) checkKept(before map[string]heldCluster) {
	for name, was := range before {
		if h, ok := c.clusters[name]; ok && h.equal(was) {
			if why := c.resolves(h); why != "" {
				c.violate("cluster %s, unchanged, lost what it reads: %s", name, why)
			}
		}
	}
}

func (c *stormClient) violate(format string, args ...any) {
	if len(c.violations) < 5 {
		c.violations = append(c.violations, fmt.Sprintf("%s (via %s): ", c.node.GetId(), c.addr)+fmt.Sprintf(format, args...))
	}
}

// evaluate stamps the first moment the client holds the target world
// completely, every response before it ACKed (it runs after the sends).
func (c *stormClient) evaluate() {
	c.mu.Lock()
	defer c.mu.Unlock()
	w := c.target.Load()
	if c.doneGen != w.gen && c.missing(w) == "" {
		c.doneGen, c.doneAt, c.doneAddr = w.gen, time.Now(), c.addr
	}
}

// missing is "" when the client holds w completely, else the first gap.
func (c *stormClient) missing(w *stormWorld) string {
	if c.addr == "" {
		return "not connected"
	}
	for _, name := range slices.Sorted(maps.Keys(w.clusters)) {
		h, ok := c.clusters[name]
		if !ok {
			return fmt.Sprintf("cluster %s missing (holds %d clusters)", name, len(c.clusters))
		}
		if why := c.resolves(h); why != "" {
			return fmt.Sprintf("cluster %s: %s", name, why)
		}
		if c.eds[h.eds] == 0 {
			return fmt.Sprintf("cluster %s: load assignment %q without endpoints", name, h.eds)
		}
		want := w.clusters[name]
		if !slices.Contains(h.secrets, want) {
			return fmt.Sprintf("cluster %s reads secrets %v, want %s", name, h.secrets, want)
		}
		if c.secrets[want] != w.cas[want] {
			return fmt.Sprintf("secret %s holds another CA than the expected one", want)
		}
	}
	if len(c.clusters) != len(w.clusters) {
		return fmt.Sprintf("holds %d clusters, want %d", len(c.clusters), len(w.clusters))
	}
	return ""
}

// decodeCluster reads what a cluster reads: its load assignment (EDS
// service name, else its own name) and the SDS secrets of its TLS.
func decodeCluster(r *anypb.Any) (string, heldCluster, error) {
	var cl clusterv3.Cluster
	if err := r.UnmarshalTo(&cl); err != nil {
		return "", heldCluster{}, err
	}
	var h heldCluster
	if cl.GetType() == clusterv3.Cluster_EDS {
		h.eds = cl.GetEdsClusterConfig().GetServiceName()
		if h.eds == "" {
			h.eds = cl.GetName()
		}
	}
	if tc := cl.GetTransportSocket().GetTypedConfig(); tc != nil {
		var tls tlsv3.UpstreamTlsContext
		if err := tc.UnmarshalTo(&tls); err != nil {
			return "", heldCluster{}, fmt.Errorf("cluster %s: %w", cl.GetName(), err)
		}
		common := tls.GetCommonTlsContext()
		for _, s := range common.GetTlsCertificateSdsSecretConfigs() {
			h.secrets = append(h.secrets, s.GetName())
		}
		if s := common.GetCombinedValidationContext().GetValidationContextSdsSecretConfig(); s != nil {
			h.secrets = append(h.secrets, s.GetName())
		}
		if s := common.GetValidationContextSdsSecretConfig(); s != nil {
			h.secrets = append(h.secrets, s.GetName())
		}
		slices.Sort(h.secrets)
	}
	return cl.GetName(), h, nil
}

// stormReport is one client's figures, read once the storm is over.
type stormReport struct {
	id                string
	delta             bool
	doneGen, attempts int
	doneAt            time.Time
	doneAddr          string
	openedAt          time.Time
	respondedAt       time.Time
	cdsVersion        string
	missing           string
	violations        []string
}

func (c *stormClient) report(w *stormWorld) stormReport {
	c.mu.Lock()
	defer c.mu.Unlock()
	r := stormReport{id: c.node.GetId(), delta: c.delta, doneGen: c.doneGen, attempts: c.attempts, doneAt: c.doneAt,
		doneAddr: c.doneAddr, openedAt: c.openedAt, respondedAt: c.respondedAt, cdsVersion: c.versions[harness.ClusterType][""],
		violations: slices.Clone(c.violations)}
	if c.doneGen != w.gen {
		r.missing = c.missing(w)
		if c.addr == "" && c.lastErr != nil {
			r.missing += fmt.Sprintf("; stream error: %v", c.lastErr)
		}
	}
	return r
}

// stormFleet runs the clients until stop.
type stormFleet struct {
	clients []*stormClient
	target  atomic.Pointer[stormWorld]
	cancel  context.CancelFunc
	wg      sync.WaitGroup
}

// startStormFleet starts sotw + delta clients, each started within spread.
func startStormFleet(sotw, delta int, addrs []string, w *stormWorld, spread time.Duration) *stormFleet {
	f := &stormFleet{}
	f.target.Store(w)
	ctx, cancel := context.WithCancel(context.Background())
	f.cancel = cancel
	for i := range sotw + delta {
		c := newStormClient(i, i >= sotw, addrs, &f.target)
		f.clients = append(f.clients, c)
		f.wg.Go(func() {
			select {
			case <-ctx.Done():
				return
			case <-time.After(time.Duration(rand.Int64N(int64(spread)))):
			}
			c.run(ctx)
		})
	}
	return f
}

// stop ends every client and waits (bounded) for their goroutines.
func (f *stormFleet) stop(timeout time.Duration) error {
	f.cancel()
	done := make(chan struct{})
	go func() { f.wg.Wait(); close(done) }()
	select {
	case <-done:
		return nil
	case <-time.After(timeout):
		return fmt.Errorf("clients still running %s after they were stopped", timeout)
	}
}

// await waits until every client holds world w completely, and returns
// the reports; on timeout the error names the first clients short of it.
func (f *stormFleet) await(w *stormWorld, timeout time.Duration) ([]stormReport, error) {
	deadline := time.Now().Add(timeout)
	for {
		done := 0
		for _, c := range f.clients {
			c.evaluate() // a client stamps itself on each response; this covers one that got none
			c.mu.Lock()
			if c.doneGen == w.gen {
				done++
			}
			c.mu.Unlock()
		}
		if done == len(f.clients) || time.Now().After(deadline) {
			reports := make([]stormReport, len(f.clients))
			var short []string
			for i, c := range f.clients {
				reports[i] = c.report(w)
				if reports[i].doneGen != w.gen && len(short) < 5 {
					short = append(short, reports[i].id+": "+reports[i].missing)
				}
			}
			if done < len(f.clients) {
				return reports, fmt.Errorf("%d of %d clients hold the complete snapshot after %s; e.g.\n%s",
					done, len(f.clients), timeout, strings.Join(short, "\n"))
			}
			return reports, nil
		}
		time.Sleep(100 * time.Millisecond)
	}
}
