package xds

import (
	"log/slog"
	"strings"
	"sync"

	"github.com/envoyproxy/go-control-plane/pkg/resource/v3"
	"k8s.io/apimachinery/pkg/types"
)

// NACK is one response an Envoy rejected.
type NACK struct {
	NodeID, Fleet, TypeURL, Version, Nonce, Message string
	// Resources are the rejected response's resources, narrowed to those
	// the message names when it names any.
	Resources []string
	// Policies produced Resources (the publisher's origins).
	Policies []types.NamespacedName

	// changed are the resources the rejected response added or changed
	// since the last one accepted, when known: the suspects when the
	// message names none (Envoy's EDS and SDS errors rarely do).
	changed []string
}

// maxRememberedNACKs bounds the once-per-(node, type, version) memory.
const maxRememberedNACKs = 4096

type nackKey struct{ node, typeURL, version string }

// nackReporter logs, counts and hands on NACKs, each (node, type,
// version) once: a reconnecting Envoy rejecting the same version again is
// not news.
type nackReporter struct {
	log     *slog.Logger
	metrics *metrics
	origins func(names []string) []types.NamespacedName
	onNACK  func(NACK)

	mu   sync.Mutex
	seen map[nackKey]bool
}

func (r *nackReporter) report(n NACK) {
	r.metrics.nacks.WithLabelValues(typeLabel(n.TypeURL)).Inc()
	key := nackKey{n.NodeID, n.TypeURL, n.Version}
	r.mu.Lock()
	if r.seen[key] {
		r.mu.Unlock()
		return
	}
	if len(r.seen) >= maxRememberedNACKs {
		clear(r.seen)
	}
	r.seen[key] = true
	r.mu.Unlock()

	n.Resources = implicated(n.Resources, n.changed, n.Message)
	if hasOrigins(n.TypeURL) {
		n.Policies = r.origins(n.Resources)
	}
	r.log.Warn("Envoy rejected an xDS response",
		"node", n.NodeID, "fleet", n.Fleet, "type_url", n.TypeURL, "version", n.Version,
		"nonce", n.Nonce, "message", n.Message, "resources", n.Resources, "policies", n.Policies)
	if r.onNACK != nil {
		r.onNACK(n)
	}
}

// hasOrigins: only clusters, load assignments and secrets come from
// policies; a listener or route configuration may bear a cluster's name
// (`<namespace>/<gateway>/<port>`), and is no policy's.
func hasOrigins(typeURL string) bool {
	return typeURL == resource.ClusterType || typeURL == resource.EndpointType || typeURL == resource.SecretType
}

// implicated narrows a rejected response to the resources Envoy's message
// names ("Error adding/updating cluster(s) shop/pay/443: ..."); a message
// naming none implicates the changed ones, or else all of them.
func implicated(resources, changed []string, message string) []string {
	var named []string
	for _, name := range resources {
		if mentions(message, name) {
			named = append(named, name)
		}
	}
	switch {
	case len(named) > 0:
		return named
	case len(changed) > 0:
		return changed
	}
	return resources
}

// mentions finds name as a whole word, so "shop/pay/80" is not found in
// "shop/pay/8080".
func mentions(message, name string) bool {
	for i := 0; name != ""; {
		j := strings.Index(message[i:], name)
		if j < 0 {
			return false
		}
		start, end := i+j, i+j+len(name)
		if (start == 0 || !nameByte(message[start-1])) && (end == len(message) || !nameByte(message[end])) {
			return true
		}
		i = start + 1
	}
	return false
}

func nameByte(b byte) bool {
	return b == '-' || b == '/' || b == '_' ||
		('0' <= b && b <= '9') || ('a' <= b && b <= 'z') || ('A' <= b && b <= 'Z')
}
