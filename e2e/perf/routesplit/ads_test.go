package routesplit

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	routev3 "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"
	discoveryv3 "github.com/envoyproxy/go-control-plane/envoy/service/discovery/v3"
	"google.golang.org/grpc"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/anypb"
)

const (
	listenerType    = "type.googleapis.com/envoy.config.listener.v3.Listener"
	routeType       = "type.googleapis.com/envoy.config.route.v3.RouteConfiguration"
	scopedRouteType = "type.googleapis.com/envoy.config.route.v3.ScopedRouteConfiguration"
	virtualHostType = "type.googleapis.com/envoy.config.route.v3.VirtualHost"
	secretType      = "type.googleapis.com/envoy.extensions.transport_sockets.tls.v3.Secret"
)

// sendOrder is the order a stream's pending types are answered in: a
// listener before the routes it names.
var sendOrder = []string{listenerType, secretType, scopedRouteType, routeType, virtualHostType}

// resource is one marshalled xDS resource and its content version.
type resource struct {
	typeURL, name, version string
	body                   *anypb.Any
}

// prepare marshals m (deterministically) into a resource, so an edit's
// cost on this side is paid before its timestamp is taken.
func prepare(typeURL, name string, m proto.Message) resource {
	b, err := proto.MarshalOptions{Deterministic: true}.Marshal(m)
	if err != nil {
		panic(fmt.Sprintf("%s %s: %v", typeURL, name, err))
	}
	sum := sha256.Sum256(b)
	return resource{typeURL: typeURL, name: name, version: hex.EncodeToString(sum[:8]),
		body: &anypb.Any{TypeUrl: typeURL, Value: b}}
}

// adsServer is a delta ADS server of hand-set resources: each stream gets
// what it subscribed to (wildcard, by name, or, for virtual hosts, by the
// route configuration they belong to: Envoy's VHDS subscribes to the name
// of the route configuration and matches "<route config>/<host>" to it),
// and every change as soon as it is set. NACKs are recorded.
type adsServer struct {
	discoveryv3.UnimplementedAggregatedDiscoveryServiceServer
	// vhdsPush sends every virtual host of a subscribed route
	// configuration; without it only the ones Envoy asks for by name
	// (the on_demand filter's requests).
	vhdsPush bool

	mu      sync.Mutex
	res     map[string]map[string]resource
	streams map[*adsStream]bool
	nacks   []string
	nonce   int
	// sentAt is when a resource last left in a response (Send returned).
	sentAt map[string]time.Time
	// asked records on-demand virtual host names Envoy asked for.
	asked []string
	// domains maps "<route config>/<domain>" to its virtual host's name.
	domains map[string]string
}

type adsStream struct {
	wake chan struct{}
	subs map[string]*subscription
	// full are the types whose subscriptions changed (every resource is
	// looked at again), dirty the names set since the last response: an
	// edit costs this side what it changed, not the whole table.
	full  map[string]bool
	dirty map[string]map[string]bool
}

type subscription struct {
	wildcard bool
	names    map[string]bool
	sent     map[string]string // name → version Envoy holds
	answered bool              // a first response went out
}

// startADS serves delta ADS on a fresh loopback port until the test ends.
func startADS(t testing.TB, vhdsPush bool) (*adsServer, string) {
	t.Helper()
	s := &adsServer{vhdsPush: vhdsPush, res: map[string]map[string]resource{},
		streams: map[*adsStream]bool{}, sentAt: map[string]time.Time{}, domains: map[string]string{}}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	g := grpc.NewServer(grpc.MaxRecvMsgSize(64<<20), grpc.MaxSendMsgSize(256<<20))
	discoveryv3.RegisterAggregatedDiscoveryServiceServer(g, s)
	go func() { _ = g.Serve(ln) }()
	t.Cleanup(g.Stop)
	return s, ln.Addr().String()
}

// set puts resources (replacing any of the same type and name) and removes
// the named ones, then wakes every stream.
func (s *adsServer) set(put []resource, remove ...[2]string) {
	s.mu.Lock()
	for _, r := range put {
		m := s.res[r.typeURL]
		if m == nil {
			m = map[string]resource{}
			s.res[r.typeURL] = m
		}
		m[r.name] = r
		if r.typeURL == virtualHostType {
			var vh routev3.VirtualHost
			if err := r.body.UnmarshalTo(&vh); err == nil {
				rc, _, _ := strings.Cut(r.name, "/")
				for _, d := range vh.Domains {
					s.domains[rc+"/"+d] = r.name
				}
			}
		}
	}
	for _, tn := range remove {
		delete(s.res[tn[0]], tn[1])
	}
	for st := range s.streams {
		for _, r := range put {
			st.markDirty(r.typeURL, r.name)
		}
		for _, tn := range remove {
			st.markDirty(tn[0], tn[1])
		}
		select {
		case st.wake <- struct{}{}:
		default:
		}
	}
	s.mu.Unlock()
}

func (st *adsStream) markDirty(typeURL, name string) {
	d := st.dirty[typeURL]
	if d == nil {
		d = map[string]bool{}
		st.dirty[typeURL] = d
	}
	d[name] = true
}

func (s *adsServer) sentTime(typeURL, name string) time.Time {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.sentAt[typeURL+" "+name]
}

func (s *adsServer) nackList() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.nacks)
}

func (s *adsServer) askedList() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.asked)
}

func (s *adsServer) StreamAggregatedResources(discoveryv3.AggregatedDiscoveryService_StreamAggregatedResourcesServer) error {
	return fmt.Errorf("state of the world is not served here: use DELTA_GRPC")
}

func (s *adsServer) DeltaAggregatedResources(stream discoveryv3.AggregatedDiscoveryService_DeltaAggregatedResourcesServer) error {
	st := &adsStream{wake: make(chan struct{}, 1), subs: map[string]*subscription{},
		full: map[string]bool{}, dirty: map[string]map[string]bool{}}
	s.mu.Lock()
	s.streams[st] = true
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		delete(s.streams, st)
		s.mu.Unlock()
	}()
	ctx, cancel := context.WithCancel(stream.Context())
	defer cancel()
	reqs, errc := make(chan *discoveryv3.DeltaDiscoveryRequest), make(chan error, 1)
	go func() {
		for {
			req, err := stream.Recv()
			if err != nil {
				errc <- err
				return
			}
			select {
			case reqs <- req:
			case <-ctx.Done():
				return
			}
		}
	}()
	for {
		select {
		case req := <-reqs:
			s.handle(st, req)
		case <-st.wake:
		case err := <-errc:
			return err
		case <-ctx.Done():
			return ctx.Err()
		}
		for _, resp := range s.pending(st) {
			if err := stream.Send(resp); err != nil {
				return err
			}
			now := time.Now()
			s.mu.Lock()
			for _, r := range resp.Resources {
				s.sentAt[resp.TypeUrl+" "+r.Name] = now
			}
			s.mu.Unlock()
		}
	}
}

func (s *adsServer) handle(st *adsStream, req *discoveryv3.DeltaDiscoveryRequest) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if req.ErrorDetail != nil {
		s.nacks = append(s.nacks, fmt.Sprintf("%s nonce %s: %s", req.TypeUrl, req.ResponseNonce, req.ErrorDetail.Message))
	}
	st.full[req.TypeUrl] = true
	sub := st.subs[req.TypeUrl]
	if sub == nil {
		sub = &subscription{names: map[string]bool{}, sent: map[string]string{}}
		st.subs[req.TypeUrl] = sub
		// Legacy wildcard: a first request naming nothing.
		sub.wildcard = len(req.ResourceNamesSubscribe) == 0
	}
	for _, n := range req.ResourceNamesSubscribe {
		if n == "*" {
			sub.wildcard = true
			continue
		}
		if req.TypeUrl == virtualHostType && strings.Contains(n, "/") {
			s.asked = append(s.asked, n)
		}
		sub.names[n] = true
	}
	for _, n := range req.ResourceNamesUnsubscribe {
		if n == "*" {
			sub.wildcard = false
			continue
		}
		delete(sub.names, n)
	}
	for n, v := range req.InitialResourceVersions {
		sub.sent[n] = v
	}
}

// wants says whether sub asks for the resource named name of typeURL.
// Envoy's VHDS subscription over delta ADS is a wildcard one (it matches
// "<route config>/…" names to its route configuration itself): without
// vhdsPush the server plays on-demand only, and sends a virtual host only
// when Envoy names it.
func (s *adsServer) wants(typeURL string, sub *subscription, name string) bool {
	if typeURL == virtualHostType && !s.vhdsPush {
		return sub.names[name]
	}
	if sub.wildcard || sub.names[name] {
		return true
	}
	if typeURL == virtualHostType {
		if i := strings.LastIndex(name, "/"); i > 0 && sub.names[name[:i]] {
			return true
		}
	}
	return false
}

// resolve finds the virtual host that serves an on-demand name
// "<route config>/<host>" (the Host header as sent): its own resource, or
// the one whose domain matches the host (case and port ignored, the
// longest wildcard suffix, then "*"), which is then sent with the asked
// name as an alias, as the VHDS protocol asks.
func resolve(have map[string]resource, domains map[string]string, asked string) (resource, bool) {
	if r, ok := have[asked]; ok {
		return r, true
	}
	i := strings.LastIndex(asked, "/")
	if i < 0 {
		return resource{}, false
	}
	rc, h := asked[:i], strings.ToLower(asked[i+1:])
	if j := strings.LastIndex(h, ":"); j >= 0 && !strings.Contains(h[j:], "]") {
		h = h[:j]
	}
	if name, ok := domains[rc+"/"+h]; ok {
		return have[name], true
	}
	for d := h; ; {
		k := strings.IndexByte(d, '.')
		if k < 0 {
			break
		}
		d = d[k+1:]
		if name, ok := domains[rc+"/*."+d]; ok {
			return have[name], true
		}
	}
	if name, ok := domains[rc+"/*"]; ok {
		return have[name], true
	}
	return resource{}, false
}

// pending builds the responses st is owed, and marks them sent.
func (s *adsServer) pending(st *adsStream) []*discoveryv3.DeltaDiscoveryResponse {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []*discoveryv3.DeltaDiscoveryResponse
	for _, typeURL := range sendOrder {
		sub := st.subs[typeURL]
		if sub == nil {
			continue
		}
		resp := &discoveryv3.DeltaDiscoveryResponse{TypeUrl: typeURL}
		have := s.res[typeURL]
		full := st.full[typeURL]
		look := func(name string) {
			r, ok := have[name]
			switch {
			case ok && s.wants(typeURL, sub, name):
				if sub.sent[name] != r.version {
					resp.Resources = append(resp.Resources, &discoveryv3.Resource{Name: name, Version: r.version, Resource: r.body})
					sub.sent[name] = r.version
				}
			case sub.sent[name] != "":
				if v := sub.sent[name]; (v == "missing" || strings.HasPrefix(v, "alias:")) && sub.names[name] {
					return
				}
				resp.RemovedResources = append(resp.RemovedResources, name)
				delete(sub.sent, name)
			}
		}
		if full {
			for name := range have {
				look(name)
			}
			for name := range sub.sent {
				look(name)
			}
		} else {
			for name := range st.dirty[typeURL] {
				look(name)
			}
		}
		delete(st.dirty, typeURL)
		delete(st.full, typeURL)
		// On demand, a virtual host asked for by a name it does not have
		// (the host with a port, in other case, under a wildcard or the
		// catch-all) is sent under its own name with the asked one as an
		// alias; one that resolves to nothing is sent empty, which tells
		// Envoy's on-demand lookup to give up (404) instead of waiting.
		if typeURL == virtualHostType && !s.vhdsPush && full {
			for name := range sub.names {
				if _, ok := have[name]; ok || !strings.Contains(name, "/") {
					continue
				}
				r, ok := resolve(have, s.domains, name)
				v := "missing"
				if ok {
					v = "alias:" + r.version
				}
				if sub.sent[name] == v {
					continue
				}
				sub.sent[name] = v
				if ok {
					resp.Resources = append(resp.Resources, &discoveryv3.Resource{Name: r.name, Aliases: []string{name}, Version: r.version, Resource: r.body})
				} else {
					resp.Resources = append(resp.Resources, &discoveryv3.Resource{Name: name, Version: v})
				}
			}
		}
		// A wildcard subscription is answered at once even when empty, so
		// Envoy's initialisation does not wait for it.
		if len(resp.Resources) == 0 && len(resp.RemovedResources) == 0 && (sub.answered || !sub.wildcard) {
			continue
		}
		sub.answered = true
		s.nonce++
		resp.Nonce = strconv.Itoa(s.nonce)
		resp.SystemVersionInfo = resp.Nonce
		slices.SortFunc(resp.Resources, func(a, b *discoveryv3.Resource) int { return strings.Compare(a.Name, b.Name) })
		out = append(out, resp)
	}
	return out
}
