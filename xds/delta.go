package xds

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"

	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	discoveryv3 "github.com/envoyproxy/go-control-plane/envoy/service/discovery/v3"
	"github.com/envoyproxy/go-control-plane/pkg/resource/v3"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/tlsplane/tlsplane/snapshots"
)

// deltaServer answers delta ADS from the publisher's feeds:
// go-control-plane's delta path costs every request and every update the
// size of the stream's whole subscription, which stalled a real Envoy at
// 10,000 clusters (it subscribes to each SDS secret in a request of its
// own).
type deltaServer struct {
	ctx    context.Context // ends every stream on Stop
	pub    *snapshots.Publisher
	cb     *callbacks
	log    *slog.Logger
	nextID atomic.Int64
}

// deltaConn is one delta ADS stream's state, owned by its serve loop.
type deltaConn struct {
	id     int64
	stream discoveryv3.AggregatedDiscoveryService_DeltaAggregatedResourcesServer
	node   *corev3.Node
	feed   *snapshots.Feed
	subs   map[string]*deltaSub
	order  []string // types in the order first asked for: CDS before EDS and SDS for Envoy
	nonce  int64
}

func (d *deltaServer) serve(stream discoveryv3.AggregatedDiscoveryService_DeltaAggregatedResourcesServer) error {
	s := &deltaConn{
		id: d.nextID.Add(1), stream: stream,
		subs: map[string]*deltaSub{},
	}
	if err := d.cb.OnDeltaStreamOpen(stream.Context(), s.id, resource.AnyType); err != nil {
		return err
	}
	defer func() { d.cb.OnDeltaStreamClosed(s.id, s.node) }()

	reqs, recvErr := receive(stream.Context(), stream.Recv)

	var changed <-chan struct{} // nil until the stream's fleet is known
	for {
		select {
		case <-d.ctx.Done():
			return nil
		case <-stream.Context().Done():
			return nil
		case err := <-recvErr:
			if errors.Is(err, io.EOF) {
				return nil
			}
			return err
		case req := <-reqs:
			typeURL, err := d.request(s, req)
			if err != nil {
				return err
			}
			if changed == nil {
				changed = s.feed.Changed() // before reading, so no update slips by
			}
			if err := d.respond(s, typeURL); err != nil {
				return err
			}
		case <-changed:
			changed = s.feed.Changed() // before reading, so no update slips by
			for _, typeURL := range s.order {
				if err := d.respond(s, typeURL); err != nil {
					return err
				}
			}
		}
	}
}

// request applies one request: the callbacks first (authorization, NACK
// detection, the publisher learning the node), then the subscription. It
// returns the request's type, to be answered.
func (d *deltaServer) request(s *deltaConn, req *discoveryv3.DeltaDiscoveryRequest) (string, error) {
	// Later requests may omit the node; the stream keeps its first.
	if req.GetNode() == nil {
		req.Node = s.node
	} else if s.node == nil {
		s.node = req.GetNode()
	}
	typeURL := req.GetTypeUrl()
	if typeURL == "" {
		return "", status.Errorf(codes.InvalidArgument, "type URL is required for ADS")
	}
	if err := d.cb.OnStreamDeltaRequest(s.id, req); err != nil {
		return "", err
	}
	if s.node == nil {
		s.node = &corev3.Node{}
	}
	if s.feed == nil {
		if s.feed = d.pub.Feed(snapshots.Fleet(s.node)); s.feed == nil {
			return "", status.Errorf(codes.Internal, "no feed for fleet %q", snapshots.Fleet(s.node))
		}
	}
	sub := s.subs[typeURL]
	if sub == nil {
		sub = newDeltaSub(req.GetResourceNamesSubscribe(), req.GetResourceNamesUnsubscribe(), req.GetInitialResourceVersions())
		s.subs[typeURL] = sub
		s.order = append(s.order, typeURL)
	} else {
		sub.update(req.GetResourceNamesSubscribe(), req.GetResourceNamesUnsubscribe())
	}
	sub.inFlight = false
	return typeURL, nil
}

// respond sends typeURL's changes unless an answer is awaiting the client.
func (d *deltaServer) respond(s *deltaConn, typeURL string) error {
	sub := s.subs[typeURL]
	if sub.inFlight {
		return nil
	}
	var a deltaAnswer
	var version string
	var err error
	// Entries are immutable: collect under the feed's lock, encode after.
	// Only a shared full answer is encoded under it, once per content.
	s.feed.Read(typeURL, func(v snapshots.FeedView) {
		a, err = sub.answer(v)
		version = v.Version
	})
	if err != nil {
		return status.Errorf(codes.Internal, "%s: %v", typeURL, err)
	}
	if a.behind {
		d.log.Warn("delta stream fell behind the feed's log; closing it so the client resynchronises", "node", s.node.GetId(), "type", typeURL)
		return status.Errorf(codes.Unavailable, "%s: this stream missed more updates than are kept; reconnect to resynchronise", typeURL)
	}
	if a.empty() && !a.mustSend {
		return nil
	}
	slices.SortFunc(a.resources, func(x, y *snapshots.FeedEntry) int { return strings.Compare(x.Name, y.Name) })
	slices.Sort(a.removed)
	encoded := make([][]byte, 0, len(a.resources)+1)
	names := make([]string, 0, len(a.resources))
	if a.full != nil {
		encoded, names = append(encoded, a.full.Encoded), a.full.Names // shared, read-only
	}
	for _, e := range a.resources {
		b, err := e.Encoded()
		if err != nil {
			return status.Errorf(codes.Internal, "%s %q: %v", typeURL, e.Name, err)
		}
		encoded = append(encoded, b)
		names = append(names, e.Name)
	}
	s.nonce++
	nonce := strconv.FormatInt(s.nonce, 10)
	d.cb.sent(streamKey{delta: true, id: s.id}, typeURL, sentResponse{nonce: nonce, version: version, resources: names})
	if err := s.stream.SendMsg(newEncodedDelta(version, typeURL, nonce, a.removed, encoded)); err != nil {
		return err
	}
	d.log.Debug("delta response sent", "node", s.node.GetId(), "type", typeURL, "version", version, "nonce", nonce, "resources", len(names), "removed", len(a.removed))
	sub.inFlight = true
	return nil
}
