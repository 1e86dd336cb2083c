package xds

import (
	"slices"
	"strings"

	discoveryv3 "github.com/envoyproxy/go-control-plane/envoy/service/discovery/v3"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/tlsplane/tlsplane/snapshots"
)

// delta is delta ADS's share of the stream loop (stream.go): a request
// subscribes and unsubscribes names, and a response carries the changed
// resources and the names removed.
type delta struct{}

// resumes: initial_resource_versions name what a reconnecting client holds.
func (delta) resumes(req *discoveryv3.DeltaDiscoveryRequest) bool {
	return len(req.GetInitialResourceVersions()) > 0
}

// subscribe answers every type, an unserved one empty; after a feed
// change, a stream's types are answered in the order first asked for: CDS
// before EDS and SDS for Envoy.
func (delta) subscribe(s *stream, req *discoveryv3.DeltaDiscoveryRequest, typeURL string) bool {
	sub, _ := s.subs[typeURL].(*deltaSub)
	if sub == nil {
		sub = newDeltaSub(req.GetResourceNamesSubscribe(), req.GetResourceNamesUnsubscribe(), req.GetInitialResourceVersions())
		s.subs[typeURL] = sub
		s.order = append(s.order, typeURL)
	} else {
		sub.update(req.GetResourceNamesSubscribe(), req.GetResourceNamesUnsubscribe())
	}
	sub.inFlight = false
	return true
}

// next is the changes the client lacks, as Resources (Encoded), and the
// names removed.
func (sub *deltaSub) next(s *stream, typeURL string) (response, bool, error) {
	if sub.inFlight {
		return response{}, false, nil
	}
	a, version, err := readFeed(s, typeURL, sub.answer)
	if err != nil {
		return response{}, false, err
	}
	if a.behind {
		s.log.Warn("delta stream fell behind the feed's log; closing it so the client resynchronises", "node", s.node.GetId(), "type", typeURL)
		return response{}, false, status.Errorf(codes.Unavailable, "%s: this stream missed more updates than are kept; reconnect to resynchronise", typeURL)
	}
	if a.empty() && !a.mustSend {
		return response{}, false, nil
	}
	slices.SortFunc(a.resources, func(x, y *snapshots.FeedEntry) int { return strings.Compare(x.Name, y.Name) })
	slices.Sort(a.removed)
	r := response{version: version, removed: a.removed}
	if a.full != nil {
		r.encoded, r.names = [][]byte{a.full.Encoded}, a.full.Names // shared, read-only
	}
	if err := r.add(typeURL, a.resources, (*snapshots.FeedEntry).Encoded); err != nil {
		return response{}, false, err
	}
	return r, true, nil
}

func (sub *deltaSub) sent(string, string) { sub.inFlight = true }
