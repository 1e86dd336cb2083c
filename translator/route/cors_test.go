package route

import (
	"regexp"
	"slices"
	"testing"

	gwv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/tlsplane/tlsplane/translator/plan"
)

func TestCORSOf(t *testing.T) {
	yes := true
	for _, tc := range []struct {
		name    string
		filter  gwv1.HTTPCORSFilter
		wantErr string
		check   func(t *testing.T, c *plan.CORS)
	}{
		{name: "lists as given, maxAge kept", filter: gwv1.HTTPCORSFilter{
			AllowOrigins: []gwv1.CORSOrigin{"https://www.foo.com"}, AllowMethods: []gwv1.HTTPMethodWithWildcard{"GET", "OPTIONS"},
			AllowHeaders: []gwv1.HTTPHeaderName{"x-header-1", "x-header-2"}, ExposeHeaders: []gwv1.HTTPHeaderName{"x-header-3"},
			AllowCredentials: &yes, MaxAge: 3600},
			check: func(t *testing.T, c *plan.CORS) {
				if !c.Credentials || c.MaxAge != 3600 || !slices.Equal(c.Methods, []string{"GET", "OPTIONS"}) ||
					!slices.Equal(c.Headers, []string{"x-header-1", "x-header-2"}) || !slices.Equal(c.Expose, []string{"x-header-3"}) {
					t.Errorf("cors = %+v", c)
				}
			}},
		{name: "maxAge defaults to 5", filter: gwv1.HTTPCORSFilter{AllowOrigins: []gwv1.CORSOrigin{"*"}},
			check: func(t *testing.T, c *plan.CORS) {
				if c.MaxAge != 5 || c.Credentials {
					t.Errorf("cors = %+v, want maxAge 5 without credentials", c)
				}
			}},
		{name: "expose * is dropped with credentials", filter: gwv1.HTTPCORSFilter{ExposeHeaders: []gwv1.HTTPHeaderName{"*", "x-a"}, AllowCredentials: &yes},
			check: func(t *testing.T, c *plan.CORS) {
				if !slices.Equal(c.Expose, []string{"x-a"}) {
					t.Errorf("expose = %q, want [x-a]", c.Expose)
				}
			}},
		{name: "expose * is kept without credentials", filter: gwv1.HTTPCORSFilter{ExposeHeaders: []gwv1.HTTPHeaderName{"*"}},
			check: func(t *testing.T, c *plan.CORS) {
				if !slices.Equal(c.Expose, []string{"*"}) {
					t.Errorf("expose = %q, want [*]", c.Expose)
				}
			}},
		{name: "origin of another scheme", filter: gwv1.HTTPCORSFilter{AllowOrigins: []gwv1.CORSOrigin{"ftp://a.example"}}, wantErr: `allowOrigins[0] "ftp://a.example": not an origin`},
		{name: "origin with a path", filter: gwv1.HTTPCORSFilter{AllowOrigins: []gwv1.CORSOrigin{"https://a.example/x"}}, wantErr: `allowOrigins[0] "https://a.example/x"`},
		{name: "wildcard inside a host", filter: gwv1.HTTPCORSFilter{AllowOrigins: []gwv1.CORSOrigin{"https://a.*.example"}}, wantErr: `allowOrigins[0] "https://a.*.example"`},
		{name: "port out of range", filter: gwv1.HTTPCORSFilter{AllowOrigins: []gwv1.CORSOrigin{"https://a.example:70000"}}, wantErr: "port 70000"},
		{name: "* beside an origin", filter: gwv1.HTTPCORSFilter{AllowOrigins: []gwv1.CORSOrigin{"https://a.example", "*"}}, wantErr: `allowOrigins[1] "*": '*' cannot stand beside`},
		{name: "unknown method", filter: gwv1.HTTPCORSFilter{AllowMethods: []gwv1.HTTPMethodWithWildcard{"get"}}, wantErr: `allowMethods[0] "get": not an HTTP method`},
		{name: "* beside a method", filter: gwv1.HTTPCORSFilter{AllowMethods: []gwv1.HTTPMethodWithWildcard{"*", "GET"}}, wantErr: `allowMethods[0] "*"`},
		{name: "* beside a header", filter: gwv1.HTTPCORSFilter{AllowHeaders: []gwv1.HTTPHeaderName{"x-a", "*"}}, wantErr: `allowHeaders[1] "*"`},
		{name: "bad header name", filter: gwv1.HTTPCORSFilter{ExposeHeaders: []gwv1.HTTPHeaderName{"x a"}}, wantErr: `exposeHeaders[0] "x a": not an HTTP header name`},
		{name: "maxAge below 1", filter: gwv1.HTTPCORSFilter{MaxAge: -1}, wantErr: "maxAge -1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := corsOf(&tc.filter)
			if !errorAsWanted(t, err, tc.wantErr) {
				return
			}
			tc.check(t, c)
		})
	}
}

// TestOriginMatches checks which Origin headers an allowed origin admits,
// matching as Envoy does: exactly, or the whole value by RE2.
func TestOriginMatches(t *testing.T) {
	for _, tc := range []struct {
		allowed string
		admit   []string
		refuse  []string
	}{
		{allowed: "*", admit: []string{"https://foobar.com", "https://foobar.com:12345", "http://x"}},
		{allowed: "https://www.foo.com", admit: []string{"https://www.foo.com", "https://www.foo.com:443"},
			refuse: []string{"http://www.foo.com", "https://www.foo.com:8443", "https://www.foo.com.evil", "https://xwww.foo.com"}},
		{allowed: "https://*.bar.com", admit: []string{"https://www.bar.com", "https://xpto.www.bar.com", "https://www.bar.com:443"},
			refuse: []string{"https://bar.com", "https://foobar.com", "http://www.bar.com", "https://www.bar.com:8443", "https://www.bar.com.evil", "https://evil.com/.bar.com"}},
		{allowed: "http://Local.example:8080", admit: []string{"http://local.example:8080"}, refuse: []string{"http://local.example", "http://local.example:80"}},
		{allowed: "http://*:8080", admit: []string{"http://a.b:8080"}, refuse: []string{"http://a.b", "https://a.b:8080"}},
	} {
		t.Run(tc.allowed, func(t *testing.T) {
			matches, err := originMatches(tc.allowed)
			if err != nil {
				t.Fatal(err)
			}
			admits := func(origin string) bool {
				for _, m := range matches {
					if m.Regex && regexp.MustCompile("^(?:"+m.Value+")$").MatchString(origin) || !m.Regex && m.Value == origin {
						return true
					}
				}
				return false
			}
			for _, o := range tc.admit {
				if !admits(o) {
					t.Errorf("%q refuses %q (matches %+v)", tc.allowed, o, matches)
				}
			}
			for _, o := range tc.refuse {
				if admits(o) {
					t.Errorf("%q admits %q (matches %+v)", tc.allowed, o, matches)
				}
			}
		})
	}
}
