package xds

import (
	"google.golang.org/protobuf/encoding/protowire"
)

// DiscoveryResponse's fields other than resources (2).
const (
	sotwVersionField = 1
	sotwTypeURLField = 4
	sotwNonceField   = 5
)

// encodedSotw is a DiscoveryResponse whose resources are already encoded
// (snapshots.FeedEntry.EncodedAny, or a FullAnswer of them): a thousand
// streams sent one update share one copy of its bytes.
type encodedSotw struct {
	head      []byte
	resources [][]byte
}

func newEncodedSotw(version, typeURL, nonce string, resources [][]byte) *encodedSotw {
	head := protowire.AppendString(protowire.AppendTag(nil, sotwVersionField, protowire.BytesType), version)
	head = protowire.AppendString(protowire.AppendTag(head, sotwTypeURLField, protowire.BytesType), typeURL)
	head = protowire.AppendString(protowire.AppendTag(head, sotwNonceField, protowire.BytesType), nonce)
	return &encodedSotw{head: head, resources: resources}
}

func (s *encodedSotw) parts() ([]byte, [][]byte) { return s.head, s.resources }
