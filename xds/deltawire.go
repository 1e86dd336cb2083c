package xds

import (
	"google.golang.org/grpc/encoding"
	"google.golang.org/grpc/encoding/proto"
	"google.golang.org/grpc/mem"
	"google.golang.org/protobuf/encoding/protowire"
)

// DeltaDiscoveryResponse's fields other than resources (2).
const (
	deltaSystemVersionField = 1
	deltaTypeURLField       = 4
	deltaNonceField         = 5
	deltaRemovedField       = 6
)

// encodedDelta is a DeltaDiscoveryResponse whose resources are already
// encoded (snapshots.FeedEntry.Encoded): the codec sends the feed's own
// bytes, so a thousand streams sent one update share one copy of it
// instead of marshalling a thousand.
type encodedDelta struct {
	head      []byte
	resources [][]byte
}

func newEncodedDelta(version, typeURL, nonce string, removed []string, resources [][]byte) *encodedDelta {
	head := protowire.AppendString(protowire.AppendTag(nil, deltaSystemVersionField, protowire.BytesType), version)
	head = protowire.AppendString(protowire.AppendTag(head, deltaTypeURLField, protowire.BytesType), typeURL)
	head = protowire.AppendString(protowire.AppendTag(head, deltaNonceField, protowire.BytesType), nonce)
	for _, name := range removed {
		head = protowire.AppendString(protowire.AppendTag(head, deltaRemovedField, protowire.BytesType), name)
	}
	return &encodedDelta{head: head, resources: resources}
}

func (d *encodedDelta) parts() ([]byte, [][]byte) { return d.head, d.resources }

// preEncoded is a response whose bytes are its head's then its resources':
// protobuf lets a message be the concatenation of its fields, in any order.
type preEncoded interface {
	parts() (head []byte, resources [][]byte)
}

// codec is gRPC's proto codec, which also writes a preEncoded response
// (encodedDelta, encodedSotw) as the concatenation of its parts, without
// copying them.
type codec struct{ proto encoding.CodecV2 }

func newCodec() codec { return codec{proto: encoding.GetCodecV2(proto.Name)} }

func (c codec) Marshal(v any) (mem.BufferSlice, error) {
	p, ok := v.(preEncoded)
	if !ok {
		return c.proto.Marshal(v)
	}
	head, resources := p.parts()
	out := make(mem.BufferSlice, 0, 1+len(resources))
	out = append(out, mem.SliceBuffer(head))
	for _, r := range resources {
		out = append(out, mem.SliceBuffer(r))
	}
	return out, nil
}

func (c codec) Unmarshal(data mem.BufferSlice, v any) error { return c.proto.Unmarshal(data, v) }

func (c codec) Name() string { return c.proto.Name() }
