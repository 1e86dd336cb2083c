package snapshots

import (
	"fmt"

	routev3 "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// A Gateway's route configuration holds a virtual host per hostname: at
// 10,000 routes, 10,000 of them in one resource that one route change
// replaces. The translator keeps the pointer of every virtual host that
// did not change, so the configuration's bytes are put together from each
// virtual host's bytes, marshalled once per pointer: a route change costs
// the copy and hash of the configuration, not marshalling 10,000 virtual
// hosts twice (once to version it, once to send it).

// virtualHostsField is RouteConfiguration.virtual_hosts.
const virtualHostsField = 2

// vhostBytes memoises each virtual host's deterministic bytes by pointer,
// for the publishes that still use it (rotated with the digests).
type vhostBytes struct {
	cur, prev map[*routev3.VirtualHost][]byte
}

func (v *vhostBytes) rotate() {
	v.prev, v.cur = v.cur, make(map[*routev3.VirtualHost][]byte, len(v.cur))
}

func (v *vhostBytes) of(vh *routev3.VirtualHost) ([]byte, error) {
	if b, ok := v.cur[vh]; ok {
		return b, nil
	}
	b, ok := v.prev[vh]
	if !ok {
		var err error
		if b, err = (proto.MarshalOptions{Deterministic: true}).Marshal(vh); err != nil {
			return nil, fmt.Errorf("virtual host %q: %w", vh.GetName(), err)
		}
	}
	if v.cur == nil {
		v.cur = map[*routev3.VirtualHost][]byte{}
	}
	v.cur[vh] = b
	return b, nil
}

// marshalRouteConfig is exactly proto's deterministic marshalling of rc
// (fields in number order: name, then the virtual hosts, then the rest),
// with each virtual host's bytes from v. The caller holds what guards v.
func (v *vhostBytes) marshalRouteConfig(rc *routev3.RouteConfiguration) ([]byte, error) {
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
	head, err := (proto.MarshalOptions{Deterministic: true}).Marshal(rest.Interface())
	if err != nil {
		return nil, err
	}
	// Fields numbered below virtual_hosts (only name) come first.
	split := 0
	for split < len(head) {
		num, _, n := protowire.ConsumeField(head[split:])
		if n < 0 {
			return nil, protowire.ParseError(n)
		}
		if num > virtualHostsField {
			break
		}
		split += n
	}
	parts := make([][]byte, len(rc.VirtualHosts))
	size := len(head)
	for i, vh := range rc.VirtualHosts {
		if parts[i], err = v.of(vh); err != nil {
			return nil, err
		}
		size += protowire.SizeTag(virtualHostsField) + protowire.SizeBytes(len(parts[i]))
	}
	out := make([]byte, 0, size)
	out = append(out, head[:split]...)
	for _, b := range parts {
		out = protowire.AppendTag(out, virtualHostsField, protowire.BytesType)
		out = protowire.AppendBytes(out, b)
	}
	return append(out, head[split:]...), nil
}
