package snapshots

import (
	"sync"

	routev3 "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// A route configuration's bytes are put together from its virtual hosts'
// (routeversion.go marshalled each once per pointer) when a stream first
// sends it, not when it is versioned: a publish no stream reads before
// the next one copies none of its megabytes.

// virtualHostsField is RouteConfiguration.virtual_hosts.
const virtualHostsField = 2

// routeWire is one route configuration's deterministic bytes, to come.
type routeWire struct {
	rc    *routev3.RouteConfiguration
	head  []byte // rc without its virtual hosts, marshalled
	split int    // head[:split] (its fields numbered below virtual_hosts) goes before them
	from  *routeWires

	once sync.Once
	wire []byte
	err  error
}

// bytes is exactly proto's deterministic marshalling of rc, built once.
func (r *routeWire) bytes() ([]byte, error) {
	r.once.Do(func() { r.wire, r.err = r.marshal() })
	return r.wire, r.err
}

// marshal puts the head and the virtual hosts' bytes together: fields in
// number order, as proto's deterministic marshalling writes them.
func (r *routeWire) marshal() ([]byte, error) {
	parts := make([][]byte, len(r.rc.VirtualHosts))
	r.from.mu.Lock()
	if st := r.from.byConfig[r.rc.GetName()]; st != nil {
		for i, vh := range r.rc.VirtualHosts {
			if w, ok := st.wires[vh]; ok {
				parts[i] = w.bytes
			}
		}
	}
	r.from.mu.Unlock()
	size := len(r.head)
	for i, vh := range r.rc.VirtualHosts {
		if parts[i] == nil {
			// Versioned since by a later configuration of this name, which
			// dropped vh: marshalled again.
			b, err := (proto.MarshalOptions{Deterministic: true}).Marshal(vh)
			if err != nil {
				return nil, err
			}
			parts[i] = b
		}
		size += protowire.SizeTag(virtualHostsField) + protowire.SizeBytes(len(parts[i]))
	}
	out := make([]byte, 0, size)
	out = append(out, r.head[:r.split]...)
	for _, b := range parts {
		out = protowire.AppendTag(out, virtualHostsField, protowire.BytesType)
		out = protowire.AppendBytes(out, b)
	}
	return append(out, r.head[r.split:]...), nil
}

// marshalHead marshals rc without its virtual hosts, and says where they
// go in its bytes.
func marshalHead(rc *routev3.RouteConfiguration) (head []byte, split int, err error) {
	// rc without its virtual hosts: the same field values, shared.
	m := rc.ProtoReflect()
	rest := m.New()
	m.Range(func(fd protoreflect.FieldDescriptor, val protoreflect.Value) bool {
		if fd.Number() != virtualHostsField {
			rest.Set(fd, val)
		}
		return true
	})
	rest.SetUnknown(m.GetUnknown())
	if head, err = (proto.MarshalOptions{Deterministic: true}).Marshal(rest.Interface()); err != nil {
		return nil, 0, err
	}
	// Fields numbered below virtual_hosts (only name) come first.
	for split < len(head) {
		num, _, n := protowire.ConsumeField(head[split:])
		if n < 0 {
			return nil, 0, protowire.ParseError(n)
		}
		if num > virtualHostsField {
			break
		}
		split += n
	}
	return head, split, nil
}
