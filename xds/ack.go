package xds

import (
	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"

	"github.com/tlsplane/tlsplane/snapshots"
)

// ACK is one response an Envoy accepted.
type ACK struct {
	NodeID, Fleet, TypeURL, Version string
}

func (c *callbacks) reportACK(node *corev3.Node, typeURL, version string) {
	if c.onACK != nil {
		c.onACK(ACK{NodeID: node.GetId(), Fleet: snapshots.Fleet(node), TypeURL: typeURL, Version: version})
	}
}
