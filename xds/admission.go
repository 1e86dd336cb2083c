package xds

import (
	"container/list"
	"net"
	"net/netip"
	"sync"
)

// ConnectionLimits bound the xDS port's connections, so that clients that
// never authenticate cannot take the file descriptors, memory or slots of
// Envoys that do. A zero field is no limit.
type ConnectionLimits struct {
	// Connections bounds the open connections, handshaking or
	// established, and PerSource those of one source address.
	Connections, PerSource int
	// Handshakes bounds the connections that have not completed their
	// (TLS) handshake, and HandshakesPerSource those of one address. When
	// a budget is full, its oldest handshake gives its slot to the new
	// connection: a stalled handshake never holds a slot an Envoy needs.
	Handshakes, HandshakesPerSource int
}

// The reasons a connection is refused or closed by the limits, the
// reason label of tlsplane_xds_connections_refused_total.
const (
	// RefusedTotal: ConnectionLimits.Connections established connections.
	RefusedTotal = "total"
	// RefusedPerSource: ConnectionLimits.PerSource established
	// connections from the same address.
	RefusedPerSource = "per_source"
	// RefusedHandshakeEvicted: a handshake budget was full and this was
	// its oldest handshake.
	RefusedHandshakeEvicted = "handshake_evicted"
	// RefusedHandshakeTimeout: the handshake did not complete in time.
	RefusedHandshakeTimeout = "handshake_timeout"
)

// admission counts the open connections, in total and per source, and
// keeps the handshaking ones in age order so the oldest can be evicted.
// Established connections are never evicted: only refused at accept, and
// only when their own count is what fills a budget.
type admission struct {
	limits ConnectionLimits

	mu          sync.Mutex
	open        int
	handshaking list.List // *slot, oldest first
	sources     map[netip.Addr]*sourceSlots
}

// sourceSlots are one source address's connections.
type sourceSlots struct {
	open        int
	handshaking list.List // *slot, oldest first
}

// slotState is where a connection stands in admission.
type slotState int

const (
	slotHandshaking slotState = iota
	slotEstablished
	slotReleased
)

// slot is one admitted connection's place in admission.
type slot struct {
	source netip.Addr
	conn   net.Conn // closed when evicted
	state  slotState
	// inAll and inSource are its elements in the handshaking lists while
	// it handshakes.
	inAll, inSource *list.Element
}

func newAdmission(limits ConnectionLimits) *admission {
	return &admission{limits: limits, sources: map[netip.Addr]*sourceSlots{}}
}

// admit gives conn from source a handshaking slot, or says why it is
// refused. evicted are the handshakes that gave up their slot for it;
// the caller closes them (outside the lock).
func (a *admission) admit(source netip.Addr, conn net.Conn) (s *slot, evicted []*slot, refused string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	src := a.sources[source]
	if src == nil {
		src = &sourceSlots{}
	}
	// Refused only when the full budget holds no handshake to evict.
	if full(a.limits.PerSource, src.open) && src.handshaking.Len() == 0 {
		return nil, nil, RefusedPerSource
	}
	if full(a.limits.Connections, a.open) && a.handshaking.Len() == 0 {
		return nil, nil, RefusedTotal
	}
	a.sources[source] = src
	// The checks above leave a handshake to evict whenever a budget is
	// full; the length tests only guard the loops.
	for src.handshaking.Len() > 0 && (full(a.limits.PerSource, src.open) || full(a.limits.HandshakesPerSource, src.handshaking.Len())) {
		evicted = append(evicted, a.evictLocked(src.handshaking.Front().Value.(*slot)))
	}
	for a.handshaking.Len() > 0 && (full(a.limits.Connections, a.open) || full(a.limits.Handshakes, a.handshaking.Len())) {
		evicted = append(evicted, a.evictLocked(a.handshaking.Front().Value.(*slot)))
	}
	s = &slot{source: source, conn: conn}
	s.inAll = a.handshaking.PushBack(s)
	s.inSource = src.handshaking.PushBack(s)
	a.open++
	src.open++
	return s, evicted, ""
}

// full: a limit of max is reached at n (a zero max is no limit).
func full(max, n int) bool { return max > 0 && n >= max }

func (a *admission) evictLocked(s *slot) *slot {
	a.releaseLocked(s)
	return s
}

// established moves s out of the handshake budgets; false when it was
// released first (evicted), and the connection must not be served.
func (a *admission) established(s *slot) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	if s.state != slotHandshaking {
		return false
	}
	a.handshaking.Remove(s.inAll)
	a.sources[s.source].handshaking.Remove(s.inSource)
	s.inAll, s.inSource = nil, nil
	s.state = slotEstablished
	return true
}

// release frees s's slot; releasing twice is a no-op.
func (a *admission) release(s *slot) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.releaseLocked(s)
}

func (a *admission) releaseLocked(s *slot) {
	if s.state == slotReleased {
		return
	}
	src := a.sources[s.source]
	if s.state == slotHandshaking {
		a.handshaking.Remove(s.inAll)
		src.handshaking.Remove(s.inSource)
		s.inAll, s.inSource = nil, nil
	}
	s.state = slotReleased
	a.open--
	if src.open--; src.open == 0 {
		delete(a.sources, s.source)
	}
}

// counts are the open connections, and those still handshaking.
func (a *admission) counts() (open, handshaking int) {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.open, a.handshaking.Len()
}

// sourceOf is the address limits count a connection under: its IP,
// IPv4-mapped addresses as IPv4; the zero Addr for a non-IP address.
func sourceOf(addr net.Addr) netip.Addr {
	if tcp, ok := addr.(*net.TCPAddr); ok {
		if ip, ok := netip.AddrFromSlice(tcp.IP); ok {
			return ip.Unmap()
		}
	}
	return netip.Addr{}
}
