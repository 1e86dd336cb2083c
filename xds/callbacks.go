package xds

import (
	"log/slog"
	"slices"
	"sync"
	"time"

	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/tlsplane/tlsplane/snapshots"
)

// sentPerType bounds the responses remembered per stream and type to
// resolve a NACK's nonce; Envoy only ever NACKs one of the last few.
const sentPerType = 4

// MaxUnservedTypes bounds the distinct type URLs tlsplane does not serve
// that one stream may name; the next one ends the stream
// (ResourceExhausted). go-control-plane's SotW loop, which served SotW
// before stream.go, cost every request and response the number of types
// the stream watched; the bound keeps what a client can make a stream
// cost independent of the server's loop. Envoy asks for a few unserved
// types at most (runtime, extension configs).
const MaxUnservedTypes = 16

// maxTypeURLInMessage cuts a client's type URL in an error: it may be
// megabytes long.
const maxTypeURLInMessage = 128

// streamKey tells SotW and delta streams apart: each flavour's streams
// are numbered from 1.
type streamKey struct {
	delta bool
	id    int64
}

// streamState is what one ADS stream has asked for and been sent.
type streamState struct {
	peer  peerIdentity
	node  *corev3.Node // nil until the first request
	types map[string]bool
	// unserved counts the entries of types tlsplane does not serve.
	unserved int
	// fleetLabel is the stream's fleet label in the metrics, set with node.
	fleetLabel string
	// labels are the type_url labels the stream counts in.
	labels map[string]bool
	sent   map[string][]sentResponse
	// acked is, per type, the last response Envoy accepted.
	acked map[string]sentResponse
	// build is the node's Envoy build, when known (fleetbuilds.go).
	build      snapshots.EnvoyBuild
	buildKnown bool
	// opened is when the stream opened; progress is, per served type,
	// what `tlsplane status` shows (connections.go).
	opened   time.Time
	progress map[string]*typeProgress
}

type sentResponse struct {
	nonce, version string
	resources      []string
	// versions of each resource, to tell which ones a rejected response
	// changed (SotW only: a delta response holds only changes). Like
	// resources, shared with the feed's full answer when it is one.
	versions []string
}

// changedSince lists the resources of r that are new or different from
// acked; all of them when nothing was accepted before.
func (r sentResponse) changedSince(acked sentResponse, ackedFound bool) []string {
	if !ackedFound || r.versions == nil {
		return r.resources
	}
	accepted := make(map[string]string, len(acked.resources))
	for i, name := range acked.resources {
		if i < len(acked.versions) {
			accepted[name] = acked.versions[i]
		}
	}
	var changed []string
	for i, name := range r.resources {
		if v, ok := accepted[name]; !ok || v != r.versions[i] {
			changed = append(changed, name)
		}
	}
	return changed
}

// callbacks watch every stream: they register its node with the publisher
// before the first watch, keep the metrics, and detect NACKs.
type callbacks struct {
	pub     *snapshots.Publisher
	log     *slog.Logger
	metrics *metrics
	nacks   *nackReporter
	// fleetIdentity, when set, refuses a stream whose peer may not read
	// its node's fleet.
	fleetIdentity *FleetIdentity
	// onACK, when set, hears every accepted response.
	onACK func(ACK)
	// builds tells the publisher each fleet's Envoy builds.
	builds *fleetBuilds

	mu      sync.Mutex
	streams map[streamKey]*streamState
}

// requestSeen is what the callbacks read of a request, either flavour.
type requestSeen struct {
	// node is the request's, or the stream's when the request has none.
	node           *corev3.Node
	typeURL, nonce string
	// rejected: the request carries error_detail, a NACK of nonce.
	rejected bool
	message  string
	// resumed: a delta request names the versions the client holds.
	resumed bool
}

// onRequest runs for every request, stale SotW ones included, before the
// stream applies it: it authorizes, counts and reports ACKs and NACKs. A
// stream is brought up to the feed's generation when answered, so a
// rejected version is not sent again by itself.
func (c *callbacks) onRequest(key streamKey, req requestSeen) error {
	if err := c.authorize(key, req.node); err != nil {
		return err
	}
	node, err := c.request(key, req.node, req.typeURL)
	if err != nil {
		return err
	}
	if req.resumed {
		c.resumed(key, req.typeURL)
	}
	if !req.rejected {
		if sent, found := c.accepted(key, req.typeURL, req.nonce); found {
			c.reportACK(node, req.typeURL, sent.version)
		}
		return nil
	}
	sent, _ := c.lookup(key, req.typeURL, req.nonce)
	// A SotW response holds every resource the client wants: which of
	// them it changed since the last accepted one narrows the NACK. A
	// delta response holds only changes.
	var changed []string
	if !key.delta {
		acked, ackedFound := c.lastAcked(key, req.typeURL)
		changed = sent.changedSince(acked, ackedFound)
	}
	c.rejected(key, req.typeURL, sent.version, req.message)
	c.nacks.report(NACK{
		NodeID: node.GetId(), Fleet: snapshots.Fleet(node), TypeURL: req.typeURL,
		Version: sent.version, Nonce: req.nonce, Message: req.message,
		Resources: sent.resources, changed: changed,
	})
	return nil
}

func (c *callbacks) open(key streamKey, peer peerIdentity) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.streams[key] = &streamState{peer: peer, types: map[string]bool{}, labels: map[string]bool{}, sent: map[string][]sentResponse{}, acked: map[string]sentResponse{},
		opened: time.Now(), progress: map[string]*typeProgress{}}
}

// ackedSotW notes an accepted SotW response: the base of the next NACK's changed set.
func (st *streamState) ackedSotW(typeURL string, resp sentResponse) {
	st.acked[typeURL] = resp
	if p := st.progressOf(typeURL); p != nil {
		p.noteACK(resp.version)
	}
}

func (c *callbacks) lastAcked(key streamKey, typeURL string) (sentResponse, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if st := c.streams[key]; st != nil {
		r, ok := st.acked[typeURL]
		return r, ok
	}
	return sentResponse{}, false
}

// authorize checks every request, not only the first: a stream must not
// switch to another fleet after passing the check once, whatever a later
// request names. A request without a node keeps the stream's node,
// already checked.
func (c *callbacks) authorize(key streamKey, node *corev3.Node) error {
	if c.fleetIdentity == nil {
		return nil
	}
	c.mu.Lock()
	st := c.streams[key]
	var peer peerIdentity
	if st != nil {
		peer = st.peer
		if node == nil {
			node = st.node
		}
	}
	c.mu.Unlock()
	if node == nil {
		node = &corev3.Node{}
	}
	return c.fleetIdentity.admit("xDS stream", peer, node, c.metrics, c.log)
}

// request notes the stream's node and types; it returns the stream's node,
// which later requests may omit, or an error that ends the stream when it
// names one type tlsplane does not serve too many.
func (c *callbacks) request(key streamKey, node *corev3.Node, typeURL string) (*corev3.Node, error) {
	c.mu.Lock()
	st := c.streams[key]
	if st == nil {
		c.mu.Unlock()
		return node, nil
	}
	first := st.node == nil
	if first {
		if node == nil {
			node = &corev3.Node{}
		}
		st.node = node
		st.fleetLabel = c.metrics.acquireFleet(snapshots.Fleet(node))
		st.build, st.buildKnown = snapshots.BuildOf(node)
	}
	node = st.node
	if !st.types[typeURL] {
		if !snapshots.Serves(typeURL) {
			if st.unserved >= MaxUnservedTypes {
				c.mu.Unlock()
				c.log.Warn("xDS stream ended: too many type URLs tlsplane does not serve", "node", node.GetId(), "fleet", snapshots.Fleet(node), "limit", MaxUnservedTypes)
				return node, status.Errorf(codes.ResourceExhausted, "node %q: type URL %q is the stream's %dth that tlsplane does not serve; at most %d are answered per stream",
					node.GetId(), shortenTo(typeURL, maxTypeURLInMessage), st.unserved+1, MaxUnservedTypes)
			}
			st.unserved++
		}
		st.types[typeURL] = true
		st.progressOf(typeURL) // NOT SENT until answered
		if label := typeLabel(typeURL); !st.labels[label] {
			st.labels[label] = true
			c.metrics.streamOpened(st.fleetLabel, label)
		}
	}
	build, buildKnown := st.build, st.buildKnown
	c.mu.Unlock()
	if first {
		if buildKnown {
			// Before the stream reads its fleet's feed: it is never sent
			// what its build refuses.
			c.builds.add(snapshots.Fleet(node), build, 1)
		}
		c.pub.NodeStreamOpened(node)
		// Logged at the first request: the stream names its node there.
		c.log.Info("Envoy connected", "node", node.GetId(), "fleet", snapshots.Fleet(node), "xds", streamKind(key), "peer", st.peer.addr, "tls", st.peer.tls)
	}
	return node, nil
}

func (c *callbacks) close(key streamKey) {
	c.mu.Lock()
	st := c.streams[key]
	delete(c.streams, key)
	c.mu.Unlock()
	if st == nil || st.node == nil {
		return
	}
	for label := range st.labels {
		c.metrics.streamClosed(st.fleetLabel, label)
	}
	c.metrics.releaseFleet(st.fleetLabel)
	c.pub.NodeStreamClosed(st.node)
	if st.buildKnown {
		c.builds.add(snapshots.Fleet(st.node), st.build, -1)
	}
	c.log.Info("Envoy disconnected", "node", st.node.GetId(), "fleet", snapshots.Fleet(st.node), "xds", streamKind(key), "peer", st.peer.addr)
}

// streamKind names a stream's xDS flavour in logs.
func streamKind(key streamKey) string {
	if key.delta {
		return "delta"
	}
	return "sotw"
}

func (c *callbacks) sent(key streamKey, typeURL string, resp sentResponse) {
	c.metrics.responses.WithLabelValues(typeLabel(typeURL)).Inc()
	now := time.Now()
	c.mu.Lock()
	defer c.mu.Unlock()
	st := c.streams[key]
	if st == nil {
		return
	}
	if p := st.progressOf(typeURL); p != nil {
		p.noteSent(resp.version, now)
	}
	list := append(st.sent[typeURL], resp)
	if len(list) > sentPerType {
		list = list[len(list)-sentPerType:]
	}
	st.sent[typeURL] = list
}

// ackedDelta notes an accepted delta response and drops its names: a delta
// NACK concerns only the response it answers, and an initial response
// names every resource (at 10,000 clusters and 1,000 streams, half a
// gigabyte).
func (st *streamState) ackedDelta(typeURL string, accepted sentResponse) {
	st.sent[typeURL] = slices.DeleteFunc(st.sent[typeURL], func(r sentResponse) bool { return r.nonce == accepted.nonce })
	if p := st.progressOf(typeURL); p != nil {
		p.noteACK(accepted.version)
	}
}

// accepted finds the response an ACK's nonce answered and notes it
// accepted, under one lock: every request of every stream passes here.
func (c *callbacks) accepted(key streamKey, typeURL, nonce string) (sentResponse, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	st := c.streams[key]
	if st == nil {
		return sentResponse{}, false
	}
	resp, found := st.find(typeURL, nonce)
	if !found {
		return resp, false
	}
	if key.delta {
		st.ackedDelta(typeURL, resp)
	} else {
		st.ackedSotW(typeURL, resp)
	}
	return resp, true
}

// lookup finds the response a nonce answered.
func (c *callbacks) lookup(key streamKey, typeURL, nonce string) (sentResponse, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if st := c.streams[key]; st != nil {
		return st.find(typeURL, nonce)
	}
	return sentResponse{}, false
}

func (st *streamState) find(typeURL, nonce string) (sentResponse, bool) {
	for _, r := range st.sent[typeURL] {
		if r.nonce == nonce {
			return r, true
		}
	}
	return sentResponse{}, false
}
