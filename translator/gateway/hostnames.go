package gateway

import (
	"slices"
	"strings"
)

// hostnameMatches reports whether host is matched by pattern, a hostname or
// a `*.` wildcard; a wildcard matches any number of labels before its
// suffix, never the suffix alone.
func hostnameMatches(pattern, host string) bool {
	if suffix, ok := strings.CutPrefix(pattern, "*"); ok {
		return strings.HasSuffix(host, suffix) && len(host) > len(suffix)
	}
	return pattern == host
}

// listenerCovers reports whether a listener with this hostname ("" for
// any) takes requests for the virtual host domain h ("*" for any).
func listenerCovers(listener, h string) bool {
	return listener == "" || listener == h || hostnameMatches(listener, h)
}

// hostnameSpecificity orders listener hostnames sharing a port: an exact
// name over any wildcard, a longer wildcard over a shorter one, any
// hostname over none. A request belongs to the most specific listener
// that covers it (listener isolation).
func hostnameSpecificity(listener string) int {
	switch {
	case listener == "":
		return 0
	case strings.HasPrefix(listener, "*"):
		return len(listener)
	default:
		return 1<<16 + len(listener)
	}
}

// intersectHostnames is the hostnames a route serves through a listener:
// the route's hostnames that the listener's matches, or the listener's when
// the route's is the more specific wildcard side; "*" when neither sets
// any. Empty means no intersection. Sorted and unique.
func intersectHostnames(listener string, route []string) []string {
	if len(route) == 0 {
		if listener == "" {
			return []string{"*"}
		}
		return []string{listener}
	}
	if listener == "" {
		return sortedUnique(route)
	}
	var out []string
	for _, h := range route {
		switch {
		case hostnameMatches(listener, h) || listener == h:
			out = append(out, h)
		case hostnameMatches(h, listener):
			out = append(out, listener)
		}
	}
	return sortedUnique(out)
}

func sortedUnique(in []string) []string {
	seen := make(map[string]bool, len(in))
	out := make([]string, 0, len(in))
	for _, s := range in {
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	slices.Sort(out)
	return out
}
