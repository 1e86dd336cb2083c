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

// vhostBytes memoises, per route configuration, each virtual host's
// deterministic bytes by name, with the pointer they were marshalled from:
// memory follows the configurations served, however many route changes
// came and went. A configuration not marshalled for two rotations (whole
// publishes) is forgotten; its next change marshals it whole once.
type vhostBytes struct {
	byConfig         map[string]map[string]marshalledVhost
	used, usedBefore map[string]bool // configurations marshalled since the last rotation, and in the one before
}

type marshalledVhost struct {
	vh    *routev3.VirtualHost
	bytes []byte
}

func (v *vhostBytes) rotate() {
	for name := range v.byConfig {
		if !v.used[name] && !v.usedBefore[name] {
			delete(v.byConfig, name)
		}
	}
	v.usedBefore, v.used = v.used, map[string]bool{}
}

// of is vh's bytes, from the memo of configuration memo when vh is the
// pointer marshalled last under its name.
func (v *vhostBytes) of(memo map[string]marshalledVhost, vh *routev3.VirtualHost) ([]byte, error) {
	if m, ok := memo[vh.GetName()]; ok && m.vh == vh {
		return m.bytes, nil
	}
	b, err := (proto.MarshalOptions{Deterministic: true}).Marshal(vh)
	if err != nil {
		return nil, fmt.Errorf("virtual host %q: %w", vh.GetName(), err)
	}
	memo[vh.GetName()] = marshalledVhost{vh: vh, bytes: b}
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
	if v.byConfig == nil {
		v.byConfig, v.used = map[string]map[string]marshalledVhost{}, map[string]bool{}
	}
	memo := v.byConfig[rc.GetName()]
	if memo == nil {
		memo = make(map[string]marshalledVhost, len(rc.VirtualHosts))
		v.byConfig[rc.GetName()] = memo
	}
	v.used[rc.GetName()] = true
	parts := make([][]byte, len(rc.VirtualHosts))
	size := len(head)
	for i, vh := range rc.VirtualHosts {
		if parts[i], err = v.of(memo, vh); err != nil {
			return nil, err
		}
		size += protowire.SizeTag(virtualHostsField) + protowire.SizeBytes(len(parts[i]))
	}
	if len(memo) > len(rc.VirtualHosts) {
		// Virtual hosts were removed: forget theirs.
		keep := make(map[string]bool, len(rc.VirtualHosts))
		for _, vh := range rc.VirtualHosts {
			keep[vh.GetName()] = true
		}
		for name := range memo {
			if !keep[name] {
				delete(memo, name)
			}
		}
	}
	out := make([]byte, 0, size)
	out = append(out, head[:split]...)
	for _, b := range parts {
		out = protowire.AppendTag(out, virtualHostsField, protowire.BytesType)
		out = protowire.AppendBytes(out, b)
	}
	return append(out, head[split:]...), nil
}
