package xds

import (
	"cmp"
	"slices"
	"strings"
	"time"

	"github.com/tlsplane/tlsplane/snapshots"
)

// The states of one type on one stream, as `tlsplane status` prints them.
const (
	// Synced: Envoy accepted the version last sent.
	Synced = "SYNCED"
	// Stale: a version Envoy has not accepted yet was sent (BehindSince).
	Stale = "STALE"
	// NACKed: Envoy's last answer for the type was a rejection.
	NACKed = "NACKED"
	// NotSent: Envoy asked for the type and was sent nothing yet (a delta
	// stream that resumed with the versions served is Synced instead).
	NotSent = "NOT SENT"
)

// maxNACKMessage bounds the rejection message kept per stream and type; a
// client's message may be megabytes long, Envoy's are a few hundred bytes.
const maxNACKMessage = 2048

// typeProgress is where one stream stands on one served type: the last
// response sent, accepted and rejected, no history. It is kept under
// callbacks.mu, which the send path takes anyway.
type typeProgress struct {
	sent, acked string // versions
	// sentAny and ackedAny: a response was sent, and accepted (a version
	// may be empty).
	sentAny, ackedAny bool
	// behindSince is when the first version Envoy has not accepted was
	// sent; zero while it holds the version last sent. It is the one time
	// kept: the send path reads the clock once (outside callbacks.mu),
	// ACKs never (time.Now costs 170 ns on the project's 2-core VMs).
	behindSince time.Time
	// nacked: Envoy's last answer was a NACK, not an ACK.
	nacked bool
	nack   *Rejected
	// resumed: a delta stream's first request named the versions Envoy
	// holds; when they are the feed's, nothing is sent and it is in sync.
	resumed bool
}

func (p *typeProgress) noteSent(version string, now time.Time) {
	p.sent, p.sentAny = version, true
	if (version != p.acked || !p.ackedAny) && p.behindSince.IsZero() {
		p.behindSince = now
	}
}

func (p *typeProgress) noteACK(version string) {
	p.acked, p.ackedAny, p.nacked = version, true, false
	if version == p.sent {
		p.behindSince = time.Time{}
	}
}

func (p *typeProgress) noteNACK(version, message string, now time.Time) {
	p.nacked = true
	p.nack = &Rejected{Version: version, Message: shortenTo(message, maxNACKMessage), At: now}
}

func (p *typeProgress) state() string {
	switch {
	case p.nacked:
		return NACKed
	case !p.sentAny && p.resumed:
		return Synced
	case !p.sentAny:
		return NotSent
	case p.acked == p.sent && p.ackedAny:
		return Synced
	}
	return Stale
}

// Rejected is the last response of a type an Envoy rejected.
type Rejected struct {
	Version string    `json:"version"`
	Message string    `json:"message"`
	At      time.Time `json:"at"`
}

// TypeStatus is one served type on one stream.
type TypeStatus struct {
	TypeURL string `json:"typeURL"`
	// State is Synced, Stale, NACKed or NotSent.
	State string `json:"state"`
	// Sent is the version last sent, Acked the version last accepted.
	Sent  string `json:"sent"`
	Acked string `json:"acked"`
	// BehindSince, when Stale or NACKed, is when the first version Envoy
	// has not accepted was sent.
	BehindSince *time.Time `json:"behindSince,omitempty"`
	// NACK is the last rejection, kept after a later version is accepted.
	NACK *Rejected `json:"nack,omitempty"`
}

// Connection is one ADS stream whose Envoy named its node.
type Connection struct {
	Node  string `json:"node"`
	Fleet string `json:"fleet"`
	// API is "sotw" or "delta".
	API   string    `json:"api"`
	Peer  string    `json:"peer"`
	TLS   bool      `json:"tls"`
	Since time.Time `json:"since"`
	// Build is the node's Envoy build ("Envoy 1.40.0 BoringSSL"), when
	// it says one.
	Build string `json:"build,omitempty"`
	// Types are the served types the stream asked for, in ADS order.
	Types []TypeStatus `json:"types"`
}

// Connections is every connected Envoy at one moment of the server's
// clock (At), which durations in it are measured against.
type Connections struct {
	At          time.Time    `json:"at"`
	Connections []Connection `json:"connections"`
}

// Connections lists the streams that named their node, sorted by fleet,
// node, API and peer.
func (s *Server) Connections() Connections { return s.cb.connections() }

func (c *callbacks) connections() Connections {
	now := time.Now()
	out := Connections{At: now.UTC(), Connections: []Connection{}}
	c.mu.Lock()
	for key, st := range c.streams {
		if st.node == nil {
			continue
		}
		conn := Connection{Node: st.node.GetId(), Fleet: snapshots.Fleet(st.node), API: streamKind(key),
			Peer: st.peer.addr, TLS: st.peer.tls, Since: st.opened.UTC(), Types: []TypeStatus{}}
		if st.buildKnown {
			conn.Build = st.build.String()
		}
		for _, typeURL := range snapshots.ServedTypes() {
			if p := st.progress[typeURL]; p != nil {
				conn.Types = append(conn.Types, p.status(typeURL))
			}
		}
		out.Connections = append(out.Connections, conn)
	}
	c.mu.Unlock()
	slices.SortFunc(out.Connections, func(a, b Connection) int {
		return cmp.Or(cmp.Compare(a.Fleet, b.Fleet), cmp.Compare(a.Node, b.Node), cmp.Compare(a.API, b.API), cmp.Compare(a.Peer, b.Peer))
	})
	return out
}

func (p *typeProgress) status(typeURL string) TypeStatus {
	s := TypeStatus{TypeURL: typeURL, State: p.state(), Sent: p.sent, Acked: p.acked, BehindSince: timeOrNil(p.behindSince)}
	if p.nack != nil {
		n := *p.nack
		n.At = n.At.UTC()
		s.NACK = &n
	}
	return s
}

func timeOrNil(t time.Time) *time.Time {
	if t.IsZero() {
		return nil
	}
	t = t.UTC()
	return &t
}

// progressOf is the stream's progress on a served type, created at its
// first use; nil for a type tlsplane does not serve (bounded by the served
// types). c.mu is held.
func (st *streamState) progressOf(typeURL string) *typeProgress {
	p := st.progress[typeURL]
	if p == nil {
		if !snapshots.Serves(typeURL) {
			return nil
		}
		p = &typeProgress{}
		st.progress[typeURL] = p
	}
	return p
}

// resumed notes a delta subscription that named the versions Envoy holds.
func (c *callbacks) resumed(key streamKey, typeURL string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if st := c.streams[key]; st != nil {
		if p := st.progressOf(typeURL); p != nil {
			p.resumed = true
		}
	}
}

// rejected notes a NACK of version on the stream's type.
func (c *callbacks) rejected(key streamKey, typeURL, version, message string) {
	now := time.Now()
	c.mu.Lock()
	defer c.mu.Unlock()
	if st := c.streams[key]; st != nil {
		if p := st.progressOf(typeURL); p != nil {
			p.noteNACK(version, message, now)
		}
	}
}

// shortenTo cuts s to at most max bytes and marks the cut.
func shortenTo(s string, max int) string {
	if len(s) <= max {
		return s
	}
	return strings.ToValidUTF8(s[:max], "") + "…"
}
