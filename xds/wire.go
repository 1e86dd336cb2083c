package xds

import (
	"google.golang.org/grpc/encoding"
	"google.golang.org/grpc/encoding/proto"
	"google.golang.org/grpc/mem"
	"google.golang.org/protobuf/encoding/protowire"
)

// The fields of a response other than resources (2): DiscoveryResponse
// and DeltaDiscoveryResponse number them alike, and only a delta response
// has removed_resources.
const (
	versionField = 1 // version_info, system_version_info
	typeURLField = 4
	nonceField   = 5
	removedField = 6 // delta only
)

// encodedResponse is a DiscoveryResponse or DeltaDiscoveryResponse whose
// resources are already encoded (snapshots.FeedEntry.EncodedAny for SotW,
// .Encoded for delta, or a FullAnswer of them): the codec sends the feed's
// own bytes, so a thousand streams sent one update share one copy of it
// instead of marshalling a thousand.
type encodedResponse struct {
	head      []byte
	resources [][]byte
}

// newEncodedResponse heads both flavours' responses with the same bytes;
// removed is for delta only (SotW passes none).
func newEncodedResponse(version, typeURL, nonce string, removed []string, resources [][]byte) *encodedResponse {
	head := protowire.AppendString(protowire.AppendTag(nil, versionField, protowire.BytesType), version)
	head = protowire.AppendString(protowire.AppendTag(head, typeURLField, protowire.BytesType), typeURL)
	head = protowire.AppendString(protowire.AppendTag(head, nonceField, protowire.BytesType), nonce)
	for _, name := range removed {
		head = protowire.AppendString(protowire.AppendTag(head, removedField, protowire.BytesType), name)
	}
	return &encodedResponse{head: head, resources: resources}
}

func (r *encodedResponse) parts() ([]byte, [][]byte) { return r.head, r.resources }

// preEncoded is a response whose bytes are its head's then its resources':
// protobuf lets a message be the concatenation of its fields, in any order.
type preEncoded interface {
	parts() (head []byte, resources [][]byte)
}

// codec is gRPC's proto codec, which also writes a preEncoded response
// (encodedResponse) as the concatenation of its parts, without
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
