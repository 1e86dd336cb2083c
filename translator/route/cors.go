package route

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"

	gwv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/tlsplane/tlsplane/translator/plan"
)

// corsDefaultMaxAge is the CRD's default maxAge, for an object that did not
// go through the API server's defaulting (a manifest directory).
const corsDefaultMaxAge = 5

// corsOrigin is the CRD's CORSOrigin pattern with its parts captured:
// scheme, host (a leading "*." or "*" alone is a wildcard), port.
var corsOrigin = regexp.MustCompile(`^(https?)://((?:\*\.)?(?:[a-zA-Z0-9-]+\.)*[a-zA-Z0-9-]+|\*)(?::([0-9]{1,5}))?$`)

// headerName is the CRD's HTTPHeaderName pattern.
var headerName = regexp.MustCompile("^[A-Za-z0-9!#$%&'*+\\-.^_`|~]+$")

// corsMethods are the values of HTTPMethodWithWildcard.
var corsMethods = []string{"GET", "HEAD", "POST", "PUT", "DELETE", "CONNECT", "OPTIONS", "TRACE", "PATCH", "*"}

// originDefaultPorts are the ports an origin of the scheme implies: the
// spec counts "https://a" and "https://a:443" as the same origin.
var originDefaultPorts = map[string]string{"http": "80", "https": "443"}

// corsOf is a CORS filter as a plan. Values the CRD refuses (an origin
// that is no http(s) origin, "*" beside other values, an unknown method,
// a bad header name, a maxAge below 1) are errors: the rule then answers
// 500.
func corsOf(f *gwv1.HTTPCORSFilter) (*plan.CORS, error) {
	c := &plan.CORS{MaxAge: f.MaxAge, Credentials: f.AllowCredentials != nil && *f.AllowCredentials}
	if len(f.AllowOrigins) > 64 {
		return nil, fmt.Errorf("allowOrigins: %d origins, at most 64", len(f.AllowOrigins))
	}
	for k, o := range f.AllowOrigins {
		if o == "*" && len(f.AllowOrigins) > 1 {
			return nil, fmt.Errorf("allowOrigins[%d] %q: '*' cannot stand beside other origins", k, o)
		}
		m, err := originMatches(string(o))
		if err != nil {
			return nil, fmt.Errorf("allowOrigins[%d] %q: %v", k, o, err)
		}
		c.Origins = append(c.Origins, m...)
	}
	if len(f.AllowMethods) > 9 {
		return nil, fmt.Errorf("allowMethods: %d methods, at most 9", len(f.AllowMethods))
	}
	for k, m := range f.AllowMethods {
		switch {
		case !slices.Contains(corsMethods, string(m)):
			return nil, fmt.Errorf("allowMethods[%d] %q: not an HTTP method (%s)", k, m, strings.Join(corsMethods, ", "))
		case m == "*" && len(f.AllowMethods) > 1:
			return nil, fmt.Errorf("allowMethods[%d] %q: '*' cannot stand beside other methods", k, m)
		}
		c.Methods = append(c.Methods, string(m))
	}
	var err error
	if c.Headers, err = corsHeaderNames("allowHeaders", f.AllowHeaders, true); err != nil {
		return nil, err
	}
	if c.Expose, err = corsHeaderNames("exposeHeaders", f.ExposeHeaders, false); err != nil {
		return nil, err
	}
	if c.Credentials && slices.Contains(c.Expose, "*") {
		// With credentials a client reads "*" as a header named "*", and
		// the spec forbids answering it; no response names every header
		// up front, so only the safelisted headers stay exposed.
		c.Expose = slices.DeleteFunc(c.Expose, func(h string) bool { return h == "*" })
	}
	switch {
	case c.MaxAge < 0:
		return nil, fmt.Errorf("maxAge %d: at least 1", c.MaxAge)
	case c.MaxAge == 0:
		c.MaxAge = corsDefaultMaxAge
	}
	return c, nil
}

// corsHeaderNames checks a list of header names; "*" may stand alone in it
// when lonelyWildcard.
func corsHeaderNames(field string, names []gwv1.HTTPHeaderName, lonelyWildcard bool) ([]string, error) {
	if len(names) > 64 {
		return nil, fmt.Errorf("%s: %d names, at most 64", field, len(names))
	}
	var out []string
	for k, h := range names {
		switch {
		case len(h) > 256 || !headerName.MatchString(string(h)):
			return nil, fmt.Errorf("%s[%d] %q: not an HTTP header name", field, k, h)
		case lonelyWildcard && h == "*" && len(names) > 1:
			return nil, fmt.Errorf("%s[%d] %q: '*' cannot stand beside other names", field, k, h)
		}
		out = append(out, string(h))
	}
	return out, nil
}

// originMatches are the matches of one allowed origin, lower-cased as
// clients send the Origin header: "*" any origin; a wildcard host a
// regular expression where "*" takes one or more DNS labels; otherwise
// the origin exactly, with and without its scheme's default port.
func originMatches(o string) ([]plan.ValueMatch, error) {
	if o == "*" {
		return []plan.ValueMatch{{Value: ".*", Regex: true}}, nil
	}
	parts := corsOrigin.FindStringSubmatch(strings.ToLower(o))
	if parts == nil {
		return nil, fmt.Errorf("not an origin <http|https>://<host>[:<port>]")
	}
	scheme, host, port := parts[1], parts[2], parts[3]
	if port != "" {
		if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 {
			return nil, fmt.Errorf("port %s: 1–65535", port)
		}
	}
	implied := port == "" || port == originDefaultPorts[scheme]
	if !strings.Contains(host, "*") {
		origin := scheme + "://" + host
		if !implied {
			return []plan.ValueMatch{{Value: origin + ":" + port}}, nil
		}
		return []plan.ValueMatch{{Value: origin}, {Value: origin + ":" + originDefaultPorts[scheme]}}, nil
	}
	hostRegex := "[^/:]+" + regexp.QuoteMeta(strings.TrimPrefix(host, "*"))
	portRegex := ":" + port
	if implied {
		portRegex = "(:" + originDefaultPorts[scheme] + ")?"
	}
	return []plan.ValueMatch{{Value: scheme + "://" + hostRegex + portRegex, Regex: true}}, nil
}

// ruleCORS sets the rule's one CORS filter on p, or says why it cannot
// serve it, naming the field and the value.
func ruleCORS(i, k int, f *gwv1.HTTPCORSFilter, p *plan.Route) string {
	if p.CORS != nil {
		return fmt.Sprintf("rules[%d].filters[%d]: a second CORS filter (a rule takes one)", i, k)
	}
	c, err := corsOf(f)
	if err != nil {
		return fmt.Sprintf("rules[%d].filters[%d].cors.%v", i, k, err)
	}
	p.CORS = c
	return ""
}
