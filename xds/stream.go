package xds

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"slices"
	"strconv"
	"sync/atomic"

	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	discoveryv3 "github.com/envoyproxy/go-control-plane/envoy/service/discovery/v3"
	rpcstatus "google.golang.org/genproto/googleapis/rpc/status"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/tlsplane/tlsplane/snapshots"
)

// request is an ADS request of either flavour, as the stream loop reads it.
type request interface {
	*discoveryv3.DiscoveryRequest | *discoveryv3.DeltaDiscoveryRequest
	GetNode() *corev3.Node
	GetTypeUrl() string
	GetResponseNonce() string
	GetErrorDetail() *rpcstatus.Status
}

// flavour is what SotW and delta ADS do differently with a request
// (sotw.go, delta.go); the stream loop does the rest.
type flavour[Req request] interface {
	// subscribe applies req, of typeURL, to the stream's subscriptions
	// once the callbacks accepted it; it reports whether to answer it.
	subscribe(s *stream, req Req, typeURL string) bool
	// resumes reports whether req names the versions the client holds.
	resumes(req Req) bool
}

// subscription is one type's subscription on a stream, in its flavour.
type subscription interface {
	// next reads what the client lacks from the feed and records it as
	// sent; ok is false when nothing is due, or when a response of the
	// type is awaiting the client.
	next(s *stream, typeURL string) (r response, ok bool, err error)
	// sent notes that the response went out: nothing more of the type is
	// sent until the client speaks.
	sent(nonce, version string)
}

// response is one response ready to send: its resources already encoded
// by the feed, in the flavour's encoding.
type response struct {
	version string
	// names, and (SotW only: non-nil) versions, of the resources, for
	// the NACK that may answer it.
	names, versions []string
	removed         []string // delta only
	encoded         [][]byte
}

// add appends entries to r, each encoded by encode.
func (r *response) add(typeURL string, entries []*snapshots.FeedEntry, encode func(*snapshots.FeedEntry) ([]byte, error)) error {
	if r.encoded == nil {
		r.encoded = make([][]byte, 0, len(entries)+1)
		r.names = make([]string, 0, len(entries))
	}
	for _, e := range entries {
		b, err := encode(e)
		if err != nil {
			return status.Errorf(codes.Internal, "%s %q: %v", typeURL, e.Name, err)
		}
		r.encoded = append(r.encoded, b)
		r.names = append(r.names, e.Name)
		if r.versions != nil {
			r.versions = append(r.versions, e.Version)
		}
	}
	return nil
}

// streams serves one ADS flavour's streams from the publisher's feeds:
// an update costs a stream the changes that concern it, and every stream
// sends the same encoded bytes. go-control-plane's delta path cost every
// request and every update the size of the stream's whole subscription,
// which stalled a real Envoy at 10,000 clusters (it subscribes to each
// SDS secret in a request of its own); its SotW server re-marshalled each
// type's whole content per stream and per update: 2.7 s and 2.2 GiB for
// 1,000 streams at 1,000 clusters.
type streams[Req request] struct {
	ctx     context.Context // ends every stream on Stop
	pub     *snapshots.Publisher
	cb      *callbacks
	log     *slog.Logger
	flavour flavour[Req]
	delta   bool   // which flavour: keys the callbacks' streams
	name    string // the flavour in logs
	// order is the types a new stream answers after a feed change, in
	// that order (shared: a flavour appending to a stream's order copies).
	order  []string
	nextID atomic.Int64
}

// stream is one ADS stream's state, owned by its serve loop and its
// receiver in turn (receive.go).
type stream struct {
	key   streamKey
	grpc  grpc.ServerStream
	log   *slog.Logger
	node  *corev3.Node
	feed  *snapshots.Feed
	subs  map[string]subscription
	order []string // the types to answer after a feed change, in order
	nonce int64
}

func (d *streams[Req]) serve(gs grpc.ServerStream, recv func() (Req, error)) error {
	s := &stream{
		key: streamKey{delta: d.delta, id: d.nextID.Add(1)}, grpc: gs, log: d.log,
		subs: map[string]subscription{}, order: slices.Clip(d.order),
	}
	d.cb.open(s.key, identityOf(gs.Context()))
	defer d.cb.close(s.key)

	watching := false
	r := receive(recv, func(req Req) (watch <-chan struct{}, err error) {
		typeURL, answer, err := d.request(s, req)
		if err != nil {
			return nil, err
		}
		if !watching {
			watching = true
			watch = s.feed.Changed() // before reading, so no update slips by
		}
		if !answer {
			return watch, nil
		}
		return watch, d.respond(s, typeURL)
	})
	defer r.close() // before the callbacks forget the stream

	var changed <-chan struct{} // nil until the stream's fleet is known
	for {
		select {
		case <-d.ctx.Done():
			return nil
		case <-gs.Context().Done():
			return nil
		case err := <-r.ended:
			if errors.Is(err, io.EOF) {
				return nil
			}
			return err
		case changed = <-r.watching:
		case <-changed:
			err := r.locked(func() error {
				changed = s.feed.Changed() // before reading, so no update slips by
				for _, typeURL := range s.order {
					if err := d.respond(s, typeURL); err != nil {
						return err
					}
				}
				return nil
			})
			if err != nil {
				return err
			}
		}
	}
}

// request applies one request: the callbacks first (authorization, NACK
// and ACK reports, the publisher learning the node), then the
// subscription. It returns the request's type and whether to answer it.
func (d *streams[Req]) request(s *stream, req Req) (string, bool, error) {
	// Later requests may omit the node; the stream keeps its first.
	node := req.GetNode()
	if node == nil {
		node = s.node
	} else if s.node == nil {
		s.node = node
	}
	typeURL := req.GetTypeUrl()
	if typeURL == "" {
		return "", false, status.Errorf(codes.InvalidArgument, "type URL is required for ADS")
	}
	seen := requestSeen{node: node, typeURL: typeURL, nonce: req.GetResponseNonce(),
		rejected: req.GetErrorDetail() != nil, message: req.GetErrorDetail().GetMessage(), resumed: d.flavour.resumes(req)}
	if err := d.cb.onRequest(s.key, seen); err != nil {
		return "", false, err
	}
	if s.node == nil {
		s.node = &corev3.Node{}
	}
	if s.feed == nil {
		if s.feed = d.pub.Feed(snapshots.Fleet(s.node)); s.feed == nil {
			return "", false, status.Errorf(codes.Internal, "no feed for fleet %q", snapshots.Fleet(s.node))
		}
	}
	return typeURL, d.flavour.subscribe(s, req, typeURL), nil
}

// respond sends typeURL what the client lacks, unless a response of the
// type is awaiting the client.
func (d *streams[Req]) respond(s *stream, typeURL string) error {
	sub := s.subs[typeURL]
	if sub == nil {
		return nil
	}
	r, ok, err := sub.next(s, typeURL)
	if err != nil || !ok {
		return err
	}
	s.nonce++
	nonce := strconv.FormatInt(s.nonce, 10)
	// Recorded before sending, so that the reply finds it.
	d.cb.sent(s.key, typeURL, sentResponse{nonce: nonce, version: r.version, resources: r.names, versions: r.versions})
	if err := s.grpc.SendMsg(newEncodedResponse(r.version, typeURL, nonce, r.removed, r.encoded)); err != nil {
		return err
	}
	if d.log.Enabled(context.Background(), slog.LevelDebug) {
		args := []any{"node", s.node.GetId(), "type", typeURL, "version", r.version, "nonce", nonce, "resources", len(r.names)}
		if s.key.delta {
			args = append(args, "removed", len(r.removed))
		}
		d.log.Debug(d.name+" response sent", args...)
	}
	sub.sent(nonce, r.version)
	return nil
}

// readFeed reads typeURL's feed with answer, which computes what the
// client lacks: entries are immutable, so they are collected under the
// feed's lock and encoded after. Only a shared full answer is encoded
// under it, once per content.
func readFeed[A any](s *stream, typeURL string, answer func(snapshots.FeedView) (A, error)) (a A, version string, err error) {
	s.feed.Read(typeURL, func(v snapshots.FeedView) {
		a, err = answer(v)
		version = v.Version
	})
	if err != nil {
		return a, "", status.Errorf(codes.Internal, "%s: %v", typeURL, err)
	}
	return a, version, nil
}
