package xds

import (
	"slices"
	"strings"

	"github.com/envoyproxy/go-control-plane/pkg/resource/v3"

	"github.com/tlsplane/tlsplane/snapshots"
)

// fullState reports whether every SotW response of typeURL must carry all
// the resources the client wants: for listeners and clusters, one missing
// from a response is deleted. Any other type may be sent only what changed
// (xDS protocol, "Grouping Resources into Responses": they "are grouped
// into responses in the same way as in the incremental protocol
// variants"), and Envoy's SotW mux hands a response's resources only to
// the watches they name, leaving the others as they were
// (GrpcMuxImpl::onDiscoveryResponse: "onConfigUpdate should be called
// only on watches ... that have updates in the message for EDS/RDS").
func fullState(typeURL string) bool {
	return typeURL == resource.ClusterType || typeURL == resource.ListenerType
}

// sotwSub is one type's subscription on a SotW stream: the names the last
// request asked for, what was last sent, and the feed generation the
// client was last brought up to. Once answered, the client holds what the
// feed served at synced, so the changes since are what it may lack.
type sotwSub struct {
	full     bool // fullState(type)
	wildcard bool
	// named: a request of the type has named a resource, which ends the
	// legacy meaning of an empty list, "everything" (xDS protocol, "How
	// the client specifies what resources to return").
	named bool
	names []string // sorted, without "*"

	started bool   // answered once (or found nothing to answer)
	synced  uint64 // feed generation of the last answer
	// pending are names requests added since the last answer: a client
	// asking for a resource again is sent it even if it did not change.
	pending []string
	// all: the next answer is everything the client wants (it turned the
	// wildcard on, or the feed's log no longer reaches synced).
	all bool

	nonce, version string // of the last response sent
	// inFlight: a response was sent and the client has not ACKed or
	// NACKed it yet; nothing more of the type is sent until it does.
	inFlight bool
}

func newSotwSub(typeURL string, names []string) *sotwSub {
	s := &sotwSub{full: fullState(typeURL)}
	s.update(names)
	return s
}

// update applies a request's resource names: SotW requests list them all.
func (s *sotwSub) update(requested []string) {
	if !s.named && len(requested) == 0 {
		s.wildcard = true
		return
	}
	s.named = true
	wildcard := false
	names := make([]string, 0, len(requested))
	for _, name := range requested {
		if name == explicitWildcard {
			wildcard = true
			continue
		}
		names = append(names, name)
	}
	slices.Sort(names)
	names = slices.Compact(names)
	if s.started {
		switch {
		case wildcard && !s.wildcard:
			s.all = true
		case !wildcard:
			s.pending = appendAdded(s.pending, s.names, names)
		}
	}
	s.wildcard, s.names = wildcard, names
}

// appendAdded appends to dst the names of after that before lacks; both
// are sorted.
func appendAdded(dst, before, after []string) []string {
	i := 0
	for _, name := range after {
		for i < len(before) && before[i] < name {
			i++
		}
		if i == len(before) || before[i] != name {
			dst = append(dst, name)
		}
	}
	return dst
}

func (s *sotwSub) wants(name string) bool {
	if s.wildcard {
		return true
	}
	_, found := slices.BinarySearch(s.names, name)
	return found
}

// sotwAnswer is what one response carries: full, the feed's shared
// encoding of every entry, or entries.
type sotwAnswer struct {
	send    bool
	full    *snapshots.FullAnswer
	entries []*snapshots.FeedEntry
}

// answer computes what the client lacks from v and records it as sent.
// Outside a full answer, it costs the changes since the last answer and
// the names just requested, not the subscription.
func (s *sotwSub) answer(v snapshots.FeedView) (sotwAnswer, error) {
	if v.Gen == 0 {
		// Nothing translated yet: an answer now, even empty, would let Envoy
		// finish initialising without its clusters. Wait for the first one.
		return sotwAnswer{}, nil
	}
	first := !s.started
	everything := first || s.all
	var changed []string
	if !everything && v.Gen > s.synced {
		var ok bool
		if changed, ok = v.ChangedSince(s.synced); !ok {
			everything = true // SotW can always start over: send all that is wanted
		}
	}
	pending := s.pending
	s.started, s.synced, s.pending, s.all = true, v.Gen, nil, false

	switch {
	case everything && s.wildcard:
		// Sent even empty: Envoy waits for the first answer to a wildcard.
		full, err := v.FullAny()
		return sotwAnswer{send: true, full: full}, err
	case everything:
		// A listener or cluster answer after the first is sent even empty:
		// it deletes what the client holds.
		entries := existing(v, s.names)
		return sotwAnswer{send: len(entries) > 0 || (s.full && !first), entries: entries}, nil
	case s.full:
		return s.fullAnswer(v, changed, pending)
	}
	seen := newSeenNames(len(changed) + len(pending))
	var entries []*snapshots.FeedEntry
	add := func(name string) {
		if !seen.add(name) {
			return
		}
		// A removed resource is not sent: outside listeners and clusters,
		// SotW deletes by the parent no longer naming it.
		if e := v.Entry(name); e != nil {
			entries = append(entries, e)
		}
	}
	for _, name := range changed {
		if s.wants(name) {
			add(name)
		}
	}
	for _, name := range pending {
		add(name)
	}
	slices.SortFunc(entries, func(a, b *snapshots.FeedEntry) int { return strings.Compare(a.Name, b.Name) })
	return sotwAnswer{send: len(entries) > 0, entries: entries}, nil
}

// fullAnswer is a listener or cluster answer: the whole wanted set, when a
// wanted resource changed or went, or a newly requested one exists.
func (s *sotwSub) fullAnswer(v snapshots.FeedView, changed, pending []string) (sotwAnswer, error) {
	touched := slices.ContainsFunc(changed, s.wants) ||
		slices.ContainsFunc(pending, func(name string) bool { return v.Entry(name) != nil })
	switch {
	case !touched:
		return sotwAnswer{}, nil
	case s.wildcard:
		full, err := v.FullAny()
		return sotwAnswer{send: true, full: full}, err
	}
	// Sent even empty: a response without a listener or cluster deletes it.
	return sotwAnswer{send: true, entries: existing(v, s.names)}, nil
}

// existing are the entries of names that v serves, in names' order.
func existing(v snapshots.FeedView, names []string) []*snapshots.FeedEntry {
	var out []*snapshots.FeedEntry
	for _, name := range names {
		if e := v.Entry(name); e != nil {
			out = append(out, e)
		}
	}
	return out
}
