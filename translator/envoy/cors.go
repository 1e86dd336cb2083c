package envoy

import (
	"slices"
	"strconv"
	"strings"

	mutationv3 "github.com/envoyproxy/go-control-plane/envoy/config/common/mutation_rules/v3"
	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	corsv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/http/cors/v3"
	headermutationv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/http/header_mutation/v3"
	hcmv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/network/http_connection_manager/v3"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/anypb"
	"google.golang.org/protobuf/types/known/wrapperspb"

	"github.com/tlsplane/tlsplane/translator/plan"
)

// The filters a CORS rule configures per route. Every connection manager
// has both, before the router: without a route's configuration they do
// nothing, so adding a CORS rule never changes the listener.
const (
	corsFilterName = "envoy.filters.http.cors"
	// The header mutation filter comes first: its encoder then also sees
	// the preflight answers the CORS filter makes.
	headerMutationFilterName = "envoy.filters.http.header_mutation"
)

// corsFilters are the connection manager's filters for CORS rules, in
// order.
func corsFilters() ([]*hcmv3.HttpFilter, error) {
	var out []*hcmv3.HttpFilter
	for _, f := range []struct {
		name   string
		config proto.Message
	}{{headerMutationFilterName, &headermutationv3.HeaderMutation{}}, {corsFilterName, &corsv3.Cors{}}} {
		config, err := anypb.New(f.config)
		if err != nil {
			return nil, err
		}
		out = append(out, &hcmv3.HttpFilter{Name: f.name, ConfigType: &hcmv3.HttpFilter_TypedConfig{TypedConfig: config}})
	}
	return out, nil
}

// corsConfigs are a rule's CORS filter as the route's per-filter
// configurations. Envoy 1.40's CORS policy answers as the spec asks: it
// echoes an allowed Origin (never "*", so credentials stay usable),
// answers a preflight itself (200, with the expose headers too) and, on
// the backend's responses, adds Access-Control-Allow-Origin, -Credentials
// and -Expose-Headers; for allow_methods "*" it echoes the preflight's
// Access-Control-Request-Method. For allow_headers "*" it echoes
// Access-Control-Request-Headers even when the preflight has none (an
// empty header, where the spec asks for none): the header mutation filter
// echoes it instead, adding nothing when it is absent.
func corsConfigs(c *plan.CORS) (map[string]*anypb.Any, error) {
	echoHeaders := slices.Equal(c.Headers, []string{"*"})
	p := &corsv3.CorsPolicy{
		AllowMethods:     strings.Join(c.Methods, ", "),
		ExposeHeaders:    strings.Join(c.Expose, ", "),
		MaxAge:           strconv.Itoa(int(c.MaxAge)),
		AllowCredentials: wrapperspb.Bool(c.Credentials),
		// The gateway answers a preflight from an origin it does not allow
		// (200 without Access-Control-Allow-Origin, so the client stops
		// there), as the spec asks; Envoy would otherwise forward it to the
		// backend, whose answer is not the gateway's to give.
		ForwardNotMatchingPreflights: wrapperspb.Bool(false),
	}
	if !echoHeaders {
		p.AllowHeaders = strings.Join(c.Headers, ", ")
	}
	for _, o := range c.Origins {
		p.AllowOriginStringMatch = append(p.AllowOriginStringMatch, stringMatcher(o))
	}
	policy, err := anypb.New(p)
	if err != nil {
		return nil, err
	}
	out := map[string]*anypb.Any{corsFilterName: policy}
	if echoHeaders {
		echo, err := anypb.New(&headermutationv3.HeaderMutationPerRoute{Mutations: &headermutationv3.Mutations{
			ResponseMutations: []*mutationv3.HeaderMutation{{Action: &mutationv3.HeaderMutation_Append{Append: &corev3.HeaderValueOption{
				Header:       &corev3.HeaderValue{Key: "access-control-allow-headers", Value: "%REQ(access-control-request-headers)%"},
				AppendAction: corev3.HeaderValueOption_OVERWRITE_IF_EXISTS_OR_ADD,
			}}}},
		}})
		if err != nil {
			return nil, err
		}
		out[headerMutationFilterName] = echo
	}
	return out, nil
}
