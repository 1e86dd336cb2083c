package envoy

import (
	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	statefulsessionv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/http/stateful_session/v3"
	hcmv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/network/http_connection_manager/v3"
	cookiev3 "github.com/envoyproxy/go-control-plane/envoy/extensions/http/stateful_session/cookie/v3"
	headerv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/http/stateful_session/header/v3"
	httpv3 "github.com/envoyproxy/go-control-plane/envoy/type/http/v3"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/anypb"
	"google.golang.org/protobuf/types/known/durationpb"

	"github.com/tlsplane/tlsplane/translator/plan"
)

// Every connection manager has the stateful session filter, before the
// router, with no session state: it does nothing until a route's
// StatefulSessionPerRoute enables it, so a policy's session persistence
// never changes a listener.
const (
	statefulSessionFilterName = "envoy.filters.http.stateful_session"
	cookieSessionStateName    = "envoy.http.stateful_session.cookie"
	headerSessionStateName    = "envoy.http.stateful_session.header"
)

// statefulSessionFilter is the connection manager's disabled filter.
func statefulSessionFilter() (*hcmv3.HttpFilter, error) {
	config, err := anypb.New(&statefulsessionv3.StatefulSession{})
	if err != nil {
		return nil, err
	}
	return &hcmv3.HttpFilter{Name: statefulSessionFilterName, ConfigType: &hcmv3.HttpFilter_TypedConfig{TypedConfig: config}}, nil
}

// sessionOf is the session of the first of backends (in the rule's order)
// whose cluster keeps sessions: a route has one session state, so when
// its backends are targeted by policies with different sessions, the
// first backend's applies to the whole route.
func sessionOf(t *plan.RouteTable, backends []plan.WeightedBackend) *plan.Session {
	if len(t.Sessions) == 0 {
		return nil
	}
	for _, b := range backends {
		if s := t.Sessions[b.Cluster]; s != nil && b.Cluster != "" {
			return s
		}
	}
	return nil
}

// sessionPerRoute is a route's StatefulSessionPerRoute for s, validated:
// not strict, so a request naming an endpoint that is gone is balanced
// as any other (and gets a new one).
func sessionPerRoute(s *plan.Session) (*anypb.Any, error) {
	var state proto.Message
	name := cookieSessionStateName
	switch s.Kind {
	case plan.SessionHeader:
		name, state = headerSessionStateName, &headerv3.HeaderBasedSessionState{Name: s.Name}
	default:
		cookie := &httpv3.Cookie{Name: s.Name, Path: s.Path}
		if s.TTL > 0 {
			cookie.Ttl = durationpb.New(s.TTL)
		}
		state = &cookiev3.CookieBasedSessionState{Cookie: cookie}
	}
	packed, err := anypb.New(state)
	if err != nil {
		return nil, err
	}
	per := &statefulsessionv3.StatefulSessionPerRoute{Override: &statefulsessionv3.StatefulSessionPerRoute_StatefulSession{
		StatefulSession: &statefulsessionv3.StatefulSession{SessionState: &corev3.TypedExtensionConfig{Name: name, TypedConfig: packed}},
	}}
	if err := per.ValidateAll(); err != nil {
		return nil, err
	}
	if v, ok := state.(interface{ ValidateAll() error }); ok {
		if err := v.ValidateAll(); err != nil {
			return nil, err
		}
	}
	return anypb.New(per)
}
