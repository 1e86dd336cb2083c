package crlfetch

import (
	"fmt"
	"net"
	"net/url"
	"strings"
)

// AllowFlag is the operator's list of allowed schemes and hosts.
const AllowFlag = "--crl-fetch-allow"

// Allowed is the set of scheme://host[:port] a list may be fetched from;
// empty: fetching is off.
type Allowed map[string]bool

// ParseAllowed reads a comma-separated list such as
// "http://crl.example.com,https://pki.internal:8443". A host without a port
// allows the scheme's default port only.
func ParseAllowed(list string) (Allowed, error) {
	allowed := Allowed{}
	for _, item := range strings.Split(list, ",") {
		item = strings.TrimSpace(item)
		if item == "" {
			continue
		}
		u, err := url.Parse(item)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil || (u.Path != "" && u.Path != "/") || u.RawQuery != "" {
			return nil, fmt.Errorf("%s: %q is not http://host[:port] or https://host[:port]", AllowFlag, item)
		}
		allowed[origin(u)] = true
	}
	return allowed, nil
}

// Allows reports whether u may be fetched.
func (a Allowed) Allows(u *url.URL) bool {
	return u.User == nil && a[origin(u)]
}

// origin is scheme://host:port, lower case, with the scheme's default port
// spelled out, so that http://h and http://h:80 are one.
func origin(u *url.URL) string {
	scheme, port := strings.ToLower(u.Scheme), u.Port()
	if port == "" {
		port = map[string]string{"http": "80", "https": "443"}[scheme]
	}
	return scheme + "://" + net.JoinHostPort(strings.ToLower(u.Hostname()), port)
}

func parseURL(raw string) (*url.URL, error) { return url.Parse(raw) }
