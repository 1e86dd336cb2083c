package snapshots

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"sync"

	routev3 "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"
	"google.golang.org/protobuf/proto"
)

// A Gateway's route configuration holds a virtual host per hostname: at
// 100,000 routes, 100,000 of them (over 10 MB) in one resource that one
// route change replaces, and hashing its bytes cost more than the rest of
// the publish. Its version is a hash of its other fields and of a content
// sum (contentsum.go) of one term per virtual host: H(hash of the one
// before it, its own hash). The translator keeps the pointer of every
// virtual host that did not change, so only the terms between the common
// head and tail of the last list and the new one are taken away and
// added: a route change costs its virtual hosts, and the bytes are put
// together only when a stream sends them (routewire.go).
//
// A term names the virtual host before it because order is content: the
// terms chain the list, so two orders of distinct virtual hosts sum
// differently. (Equal virtual hosts in one configuration would repeat
// their domains, which Envoy refuses.)

// routeWires versions route configurations per virtual host and keeps
// their virtual hosts' bytes for routeWire.bytes.
type routeWires struct {
	mu               sync.Mutex
	byConfig         map[string]*routeState
	used, usedBefore map[string]bool // configurations versioned since the last rotation, and in the one before
}

// routeState is the configuration of one name as last versioned: its
// virtual hosts (a slice the translator never writes again: it copies
// before it edits), their sum, and each one's bytes and hash.
type routeState struct {
	vhosts []*routev3.VirtualHost
	sum    contentSum
	wires  map[*routev3.VirtualHost]*vhostWire
}

type vhostWire struct {
	bytes []byte
	hash  [sha256.Size]byte
}

func newRouteWires() *routeWires {
	return &routeWires{byConfig: map[string]*routeState{}, used: map[string]bool{}}
}

// rotate forgets configurations not versioned for two rotations (whole
// publishes): memory follows the configurations served; a forgotten one
// that comes back is hashed whole once.
func (w *routeWires) rotate() {
	w.mu.Lock()
	defer w.mu.Unlock()
	for name := range w.byConfig {
		if !w.used[name] && !w.usedBefore[name] {
			delete(w.byConfig, name)
		}
	}
	w.usedBefore, w.used = w.used, map[string]bool{}
}

// version is rc's content version, and its bytes to come.
func (w *routeWires) version(rc *routev3.RouteConfiguration) (string, *routeWire, error) {
	head, split, err := marshalHead(rc)
	if err != nil {
		return "", nil, err
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	st := w.byConfig[rc.GetName()]
	if st == nil {
		st = &routeState{wires: make(map[*routev3.VirtualHost]*vhostWire, len(rc.VirtualHosts))}
		w.byConfig[rc.GetName()] = st
	}
	w.used[rc.GetName()] = true
	if err := st.advance(rc.VirtualHosts); err != nil {
		return "", nil, err
	}
	return routeVersion(head, st.sum), &routeWire{rc: rc, head: head, split: split, from: w}, nil
}

// routeVersion hashes a configuration's fields but its virtual hosts
// (head, marshalled) with its virtual hosts' sum: as long as go-control-
// plane's hash of a resource's bytes, like every other resource's version.
func routeVersion(head []byte, sum contentSum) string {
	h := sha256.New()
	var length [8]byte
	binary.BigEndian.PutUint64(length[:], uint64(len(head)))
	h.Write(length[:])
	h.Write(head)
	b := sum.bytes()
	h.Write(b[:])
	return hex.EncodeToString(h.Sum(nil))
}

// advance moves st to vhosts: the terms of the virtual hosts between the
// common head and tail of the two lists are taken away and added, and so
// is the first of the tail's, whose virtual host before may be new.
func (st *routeState) advance(vhosts []*routev3.VirtualHost) error {
	old := st.vhosts
	head := 0
	for head < len(old) && head < len(vhosts) && old[head] == vhosts[head] {
		head++
	}
	tail := 0
	for tail < len(old)-head && tail < len(vhosts)-head && old[len(old)-1-tail] == vhosts[len(vhosts)-1-tail] {
		tail++
	}
	if err := st.addTerms(old, head, len(old)-tail, -1); err != nil {
		return err
	}
	if err := st.addTerms(vhosts, head, len(vhosts)-tail, 1); err != nil {
		return err
	}
	if gone := old[head : len(old)-tail]; len(gone) > 0 {
		kept := make(map[*routev3.VirtualHost]bool, len(vhosts)-head-tail)
		for _, vh := range vhosts[head : len(vhosts)-tail] {
			kept[vh] = true
		}
		for _, vh := range gone {
			if !kept[vh] {
				delete(st.wires, vh) // a pointer also in the head or tail is marshalled again when next needed
			}
		}
	}
	st.vhosts = vhosts
	return nil
}

// addTerms adds (sign 1) or takes away (-1) the terms of list[from:to+1].
func (st *routeState) addTerms(list []*routev3.VirtualHost, from, to, sign int) error {
	for i := from; i <= to && i < len(list); i++ {
		var before [sha256.Size]byte // zero: the first has none
		if i > 0 {
			w, err := st.wire(list[i-1])
			if err != nil {
				return err
			}
			before = w.hash
		}
		w, err := st.wire(list[i])
		if err != nil {
			return err
		}
		st.sum.add(vhostTerm(before, w.hash), sign)
	}
	return nil
}

// vhostTerm is a virtual host's term of its configuration's sum.
func vhostTerm(before, own [sha256.Size]byte) contentSum {
	var pair [2 * sha256.Size]byte
	copy(pair[:], before[:])
	copy(pair[sha256.Size:], own[:])
	return sumElement(sha256.Sum256(pair[:]))
}

// wire is vh's bytes and hash, marshalled once per pointer.
func (st *routeState) wire(vh *routev3.VirtualHost) (*vhostWire, error) {
	if w, ok := st.wires[vh]; ok {
		return w, nil
	}
	b, err := (proto.MarshalOptions{Deterministic: true}).Marshal(vh)
	if err != nil {
		return nil, fmt.Errorf("virtual host %q: %w", vh.GetName(), err)
	}
	w := &vhostWire{bytes: b, hash: sha256.Sum256(b)}
	st.wires[vh] = w
	return w, nil
}
