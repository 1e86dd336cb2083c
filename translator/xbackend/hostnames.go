package xbackend

import (
	"fmt"
	"strings"
)

// Hostnames is the operator's allow-list of the external hostnames an
// XBackend may name (GEP-4894: "implementations SHOULD provide
// control-plane guardrails, for example an allow-list of permitted egress
// domains"): a tenant's XBackend otherwise sends its Gateway's Envoy to any
// name DNS answers. A nil *Hostnames allows every external name.
type Hostnames struct {
	// Flag names the setting in messages (for example "--xbackend-hostnames").
	Flag     string
	exact    map[string]bool
	suffixes []string // ".example.com" for "*.example.com"
	patterns []string // as given, for messages
}

// ParseHostnames reads a comma-separated list of hostnames ("api.pay.example")
// and wildcards ("*.pay.example": one or more labels before pay.example, as
// Gateway API's wildcard hostnames). Empty gives nil: every name allowed.
func ParseHostnames(list, flag string) (*Hostnames, error) {
	h := &Hostnames{Flag: flag, exact: map[string]bool{}}
	for _, raw := range strings.Split(list, ",") {
		p := strings.TrimSuffix(strings.ToLower(strings.TrimSpace(raw)), ".")
		if p == "" {
			continue
		}
		base, wildcard := strings.CutPrefix(p, "*.")
		if problem := patternProblem(base); problem != "" {
			return nil, fmt.Errorf("%s: %q %s", flag, strings.TrimSpace(raw), problem)
		}
		if wildcard {
			h.suffixes = append(h.suffixes, "."+base)
		} else {
			h.exact[base] = true
		}
		h.patterns = append(h.patterns, p)
	}
	if len(h.patterns) == 0 {
		return nil, nil
	}
	return h, nil
}

// patternProblem says why base cannot be an allow-list entry.
func patternProblem(base string) string {
	if base == "" || strings.Contains(base, "*") {
		return "is not a hostname or *.hostname (a wildcard is only a whole first label)"
	}
	for _, label := range strings.Split(base, ".") {
		if label == "" || len(label) > 63 {
			return "has an empty or over-long label"
		}
	}
	return ""
}

// Allows says whether host (any case, a trailing dot allowed) is on the list.
func (h *Hostnames) Allows(host string) bool {
	if h == nil {
		return true
	}
	host = strings.TrimSuffix(strings.ToLower(host), ".")
	if h.exact[host] {
		return true
	}
	for _, s := range h.suffixes {
		if len(host) > len(s) && strings.HasSuffix(host, s) {
			return true
		}
	}
	return false
}

// Names says whether the operator's list covers host: unlike Allows, a
// nil list names nothing (loopback names need naming).
func (h *Hostnames) Names(host string) bool {
	return h != nil && h.Allows(host)
}

// String lists the patterns as given, for messages.
func (h *Hostnames) String() string {
	if h == nil {
		return "every external hostname"
	}
	return strings.Join(h.patterns, ",")
}

// isLoopbackName: localhost and every name under it resolve to the host
// itself (RFC 6761 §6.3), where Envoy's admin port and the node's own
// endpoints listen; no tenant's XBackend may send a shared Envoy there.
func isLoopbackName(host string) bool {
	return host == "localhost" || strings.HasSuffix(host, ".localhost")
}
