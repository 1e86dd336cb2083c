package envoy

import (
	"strconv"
	"strings"

	corsv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/http/cors/v3"
	hcmv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/network/http_connection_manager/v3"
	"google.golang.org/protobuf/types/known/anypb"
	"google.golang.org/protobuf/types/known/wrapperspb"

	"github.com/tlsplane/tlsplane/translator/plan"
)

// corsFilterName names the CORS filter in every connection manager and in
// a route's typed_per_filter_config; without a route's policy it does
// nothing, so adding a CORS rule never changes the listener.
const corsFilterName = "envoy.filters.http.cors"

// corsFilter is the CORS filter of a connection manager.
func corsFilter() (*hcmv3.HttpFilter, error) {
	cors, err := anypb.New(&corsv3.Cors{})
	if err != nil {
		return nil, err
	}
	return &hcmv3.HttpFilter{Name: corsFilterName, ConfigType: &hcmv3.HttpFilter_TypedConfig{TypedConfig: cors}}, nil
}

// corsPolicy is a rule's CORS filter as Envoy's per-route policy. Envoy
// 1.40 answers as the spec asks: it echoes an allowed Origin (never "*",
// so credentials stay usable), answers a preflight itself (200, with the
// expose headers too) and, on the backend's responses, adds
// Access-Control-Allow-Origin, -Credentials and -Expose-Headers; for
// allow_methods or allow_headers "*" it echoes the preflight's
// Access-Control-Request-Method or -Headers.
func corsPolicy(c *plan.CORS) (*anypb.Any, error) {
	p := &corsv3.CorsPolicy{
		AllowMethods:     strings.Join(c.Methods, ", "),
		AllowHeaders:     strings.Join(c.Headers, ", "),
		ExposeHeaders:    strings.Join(c.Expose, ", "),
		MaxAge:           strconv.Itoa(int(c.MaxAge)),
		AllowCredentials: wrapperspb.Bool(c.Credentials),
		// The gateway answers a preflight from an origin it does not allow
		// (200 without Access-Control-Allow-Origin, so the client stops
		// there), as the spec asks; Envoy would otherwise forward it to the
		// backend, whose answer is not the gateway's to give.
		ForwardNotMatchingPreflights: wrapperspb.Bool(false),
	}
	for _, o := range c.Origins {
		p.AllowOriginStringMatch = append(p.AllowOriginStringMatch, stringMatcher(o))
	}
	return anypb.New(p)
}
