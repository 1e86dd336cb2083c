package xds

import (
	"github.com/tlsplane/tlsplane/snapshots"
)

// explicitWildcard is the resource name that subscribes to every resource
// of a type (xDS protocol, "How the client specifies what resources to
// return").
const explicitWildcard = "*"

// deltaSub is one type's subscription on a delta stream: what the client
// asked for, and the feed generation it was last brought up to. It keeps
// no per-resource versions: once answered, the client holds exactly what
// the feed served at synced, so the changes since are what it lacks.
type deltaSub struct {
	wildcard bool
	// legacy: the stream has not named a resource yet, so its first empty
	// request still means "everything".
	legacy bool
	names  map[string]struct{}

	started bool   // answered once; until then the first answer is a full pass
	synced  uint64 // feed generation of the last answer
	// known is initial_resource_versions: what a reconnecting client holds,
	// read by the first answer only.
	known map[string]string
	// pending must be answered whatever the log says: names subscribed
	// after the first answer, or unsubscribed under a wildcard (the client
	// drops them, so they are sent again).
	pending map[string]struct{}
	// inFlight: an answer was sent and the client has not spoken since;
	// nothing more is sent until it does (ACK, NACK or a new subscription).
	inFlight bool
}

func newDeltaSub(subscribe, unsubscribe []string, known map[string]string) *deltaSub {
	s := &deltaSub{
		wildcard: len(subscribe) == 0,
		legacy:   len(subscribe) == 0,
		names:    map[string]struct{}{},
		known:    known,
		pending:  map[string]struct{}{},
	}
	s.update(subscribe, unsubscribe)
	return s
}

// update applies a request's subscription changes, as go-control-plane's
// stream.Subscription does.
func (s *deltaSub) update(subscribe, unsubscribe []string) {
	if s.legacy {
		if len(subscribe) == 0 {
			return
		}
		s.legacy = false // a named resource ends the legacy meaning of "none"
	}
	for _, name := range subscribe {
		if name == explicitWildcard {
			s.wildcard = true
			continue
		}
		s.names[name] = struct{}{}
		if s.started {
			s.pending[name] = struct{}{}
		}
	}
	for _, name := range unsubscribe {
		if name == explicitWildcard {
			s.wildcard = false
			continue
		}
		_, had := s.names[name]
		delete(s.names, name)
		delete(s.pending, name)
		if had && s.wildcard && s.started {
			s.pending[name] = struct{}{}
		}
	}
}

func (s *deltaSub) wants(name string) bool {
	if s.wildcard {
		return true
	}
	_, ok := s.names[name]
	return ok
}

// deltaAnswer is what one response carries.
type deltaAnswer struct {
	resources []*snapshots.FeedEntry
	// full: every entry of the type, as the feed's shared encoding of them,
	// in place of resources.
	full    *snapshots.FullAnswer
	removed []string
	// mustSend: the first answer to a wildcard subscription goes out even
	// empty; Envoy waits for it to finish initialising.
	mustSend bool
	// behind: the client missed more updates than the feed's log holds.
	behind bool
}

func (a deltaAnswer) empty() bool {
	return a.full == nil && len(a.resources) == 0 && len(a.removed) == 0
}

// answer computes what the client lacks from v and records it as sent.
// It costs the changes since the last answer, not the subscription.
func (s *deltaSub) answer(v snapshots.FeedView) (deltaAnswer, error) {
	if v.Gen == 0 {
		// Nothing translated yet: an answer now, even empty, would let Envoy
		// finish initialising without its clusters. Wait for the first one.
		return deltaAnswer{}, nil
	}
	if !s.started {
		a, err := s.first(v)
		if err != nil {
			return deltaAnswer{}, err
		}
		s.started, s.synced, s.known, s.pending = true, v.Gen, nil, map[string]struct{}{}
		return a, nil
	}
	var a deltaAnswer
	var changed []string
	if v.Gen > s.synced {
		var ok bool
		if changed, ok = v.ChangedSince(s.synced); !ok {
			return deltaAnswer{behind: true}, nil
		}
	}
	seen := newSeenNames(len(changed) + len(s.pending))
	add := func(name string) {
		if !s.wants(name) || !seen.add(name) {
			return
		}
		if e := v.Entry(name); e != nil {
			a.resources = append(a.resources, e)
		} else {
			a.removed = append(a.removed, name)
		}
	}
	for _, name := range changed {
		add(name)
	}
	for name := range s.pending {
		add(name)
	}
	s.synced = v.Gen
	// Every change and every ACK answers, most with nothing pending: the
	// map is kept, unless a burst of subscriptions grew it.
	if len(s.pending) > fewNames {
		s.pending = map[string]struct{}{}
	} else {
		clear(s.pending)
	}
	return a, nil
}

// first is the full pass: everything subscribed that the client does not
// already hold at the served version, and the removal of what it holds
// that is gone. A subscribed name that is not served is answered removed,
// so the client stops waiting for it.
func (s *deltaSub) first(v snapshots.FeedView) (deltaAnswer, error) {
	a := deltaAnswer{mustSend: s.wildcard}
	switch {
	case s.wildcard && len(s.known) == 0:
		var err error
		if a.full, err = v.Full(); err != nil { // what every new wildcard stream gets: shared
			return deltaAnswer{}, err
		}
	case s.wildcard:
		v.Each(func(e *snapshots.FeedEntry) {
			if s.known[e.Name] != e.Version {
				a.resources = append(a.resources, e)
			}
		})
	}
	for name := range s.names {
		e := v.Entry(name)
		switch {
		case e == nil:
			a.removed = append(a.removed, name)
		case !s.wildcard && s.known[name] != e.Version:
			a.resources = append(a.resources, e)
		}
	}
	for name := range s.known {
		if _, named := s.names[name]; !named && v.Entry(name) == nil {
			a.removed = append(a.removed, name)
		}
	}
	return a, nil
}
