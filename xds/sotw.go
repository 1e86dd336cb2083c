package xds

import (
	discoveryv3 "github.com/envoyproxy/go-control-plane/envoy/service/discovery/v3"

	"github.com/tlsplane/tlsplane/snapshots"
)

// sotw is state-of-the-world ADS's share of the stream loop (stream.go):
// a request lists all the names of its type, a stale one is ignored, and
// a response carries whole resources as Anys.
type sotw struct{}

func (sotw) resumes(*discoveryv3.DiscoveryRequest) bool { return false }

func (sotw) subscribe(s *stream, req *discoveryv3.DiscoveryRequest, typeURL string) bool {
	if !snapshots.Serves(typeURL) {
		// Never answered, as go-control-plane's cache never answered a type
		// its snapshots lack; the callbacks bound how many a stream names.
		return false
	}
	sub, _ := s.subs[typeURL].(*sotwSub)
	if sub == nil {
		s.subs[typeURL] = newSotwSub(typeURL, req.GetResourceNames())
		return true
	}
	if sub.nonce != "" && req.GetResponseNonce() != sub.nonce {
		// A stale nonce: the request was sent before our last response was
		// read, which supersedes it; the client's next request will carry
		// its current names (xDS protocol, "Resource updates").
		s.log.Debug("SotW request with a stale nonce ignored", "node", s.node.GetId(), "type", typeURL,
			"nonce", req.GetResponseNonce(), "last_nonce", sub.nonce, "last_version", sub.version)
		return false
	}
	// An ACK or a NACK of the last response: either way the client is
	// ready for the next. A NACK does not make the rejected version due
	// again: the stream was brought up to its generation when it was sent,
	// so only a later change (a new version) is sent.
	sub.inFlight = false
	sub.update(req.GetResourceNames())
	return true
}

// next is what the client lacks, as whole resources (EncodedAny).
func (sub *sotwSub) next(s *stream, typeURL string) (response, bool, error) {
	if sub.inFlight {
		return response{}, false, nil
	}
	a, version, err := readFeed(s, typeURL, sub.answer)
	if err != nil || !a.send {
		return response{}, false, err
	}
	if a.full != nil {
		// Shared, read-only: one copy for every stream.
		return response{version: version, names: a.full.Names, versions: a.full.Versions, encoded: [][]byte{a.full.Encoded}}, true, nil
	}
	r := response{version: version, versions: make([]string, 0, len(a.entries))}
	if err := r.add(typeURL, a.entries, (*snapshots.FeedEntry).EncodedAny); err != nil {
		return response{}, false, err
	}
	return r, true, nil
}

func (sub *sotwSub) sent(nonce, version string) {
	sub.inFlight, sub.nonce, sub.version = true, nonce, version
}
