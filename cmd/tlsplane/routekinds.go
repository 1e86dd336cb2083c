package main

import (
	"strings"

	"github.com/tlsplane/tlsplane/translator"
)

// routeKindList names every route kind (translator.RouteKinds) for help
// texts, each name followed by suffix ("s": the plural), joined by sep
// and the last by last: routeKindList("s", ", ", " and ").
func routeKindList(suffix, sep, last string) string {
	names := make([]string, len(translator.RouteKinds))
	for i, rk := range translator.RouteKinds {
		names[i] = string(rk.Kind()) + suffix
	}
	if len(names) < 2 {
		return strings.Join(names, "")
	}
	return strings.Join(names[:len(names)-1], sep) + last + names[len(names)-1]
}
