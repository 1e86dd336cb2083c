package document

import (
	"bytes"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	clusterv3 "github.com/envoyproxy/go-control-plane/envoy/config/cluster/v3"
	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	endpointv3 "github.com/envoyproxy/go-control-plane/envoy/config/endpoint/v3"
	listenerv3 "github.com/envoyproxy/go-control-plane/envoy/config/listener/v3"
	routev3 "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"
	tlsv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/transport_sockets/tls/v3"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/known/anypb"
	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/emptypb"
	"google.golang.org/protobuf/types/known/structpb"
	"google.golang.org/protobuf/types/known/wrapperspb"
)

// TestProtoYAMLIsProtoValueYAML: for random Envoy resources, the YAML
// the proto walk writes is byte for byte what the path before it wrote
// (protojson, decodeJSON, then the emitter or yaml.v2); and the walk
// writes most of them, so the comparison is not vacuous.
func TestProtoYAMLIsProtoValueYAML(t *testing.T) {
	r := rand.New(rand.NewPCG(37, 2))
	types := []proto.Message{&clusterv3.Cluster{}, &listenerv3.Listener{}, &routev3.RouteConfiguration{}, &tlsv3.Secret{}, &endpointv3.ClusterLoadAssignment{}}
	const n = 3000
	walked, compared := 0, 0
	for i := range n {
		m := types[i%len(types)].ProtoReflect().New()
		fillProto(r, m, 0)
		plain, err := ProtoValue(m.Interface())
		if err != nil {
			continue // protojson refuses it (an unset Any's type): so does the document
		}
		compared++
		want, err := elementYAML("clusters", plain, true)
		if err != nil {
			t.Fatal(err)
		}
		got, ok := emittedElement(nil, "clusters", protoNode{"random", m.Interface()})
		if !ok {
			continue
		}
		walked++
		if !bytes.Equal(got, want) {
			t.Fatalf("%s %d:\n%v\ngot (proto walk):\n%s\nwant (protojson, decodeJSON, emitter):\n%s", m.Descriptor().FullName(), i, m.Interface(), got, want)
		}
	}
	t.Logf("walked %d of %d compared", walked, compared)
	if compared < n/2 || walked < compared/2 {
		t.Errorf("the walk wrote %d of the %d resources protojson took (of %d); want at least half", walked, compared, n)
	}
}

// fillProto sets some of m's fields to values that test protojson's
// mapping and the emitter's styles: every scalar kind at its edges,
// unknown enum numbers, lists, maps, oneofs, and the well-known types
// (Any of resolvable and unresolvable types, Duration, wrappers, Struct,
// Empty).
func fillProto(r *rand.Rand, m protoreflect.Message, depth int) {
	fds := m.Descriptor().Fields()
	for i := range fds.Len() {
		fd := fds.Get(i)
		if r.IntN(6) != 0 || depth > 3 && fd.Kind() == protoreflect.MessageKind {
			continue
		}
		switch {
		case fd.IsList():
			l := m.Mutable(fd).List()
			for k := 1 + r.IntN(3); k > 0; k-- {
				l.Append(randomProtoValue(r, fd, l.NewElement(), depth))
			}
		case fd.IsMap():
			mm := m.Mutable(fd).Map()
			for k := 1 + r.IntN(3); k > 0; k-- {
				key := randomProtoValue(r, fd.MapKey(), protoreflect.Value{}, depth).MapKey()
				mm.Set(key, randomProtoValue(r, fd.MapValue(), mm.NewValue(), depth))
			}
		default:
			var fresh protoreflect.Value
			if fd.Kind() == protoreflect.MessageKind {
				fresh = m.NewField(fd)
			}
			m.Set(fd, randomProtoValue(r, fd, fresh, depth))
		}
	}
}

func randomProtoValue(r *rand.Rand, fd protoreflect.FieldDescriptor, fresh protoreflect.Value, depth int) protoreflect.Value {
	pick := func(n int) int { return r.IntN(n) }
	switch fd.Kind() {
	case protoreflect.BoolKind:
		return protoreflect.ValueOfBool(pick(2) == 0)
	case protoreflect.StringKind:
		if pick(20) == 0 {
			return protoreflect.ValueOfString("caf\u00e9")
		}
		return protoreflect.ValueOfString(randomYAMLString(r))
	case protoreflect.Int32Kind, protoreflect.Sint32Kind, protoreflect.Sfixed32Kind:
		return protoreflect.ValueOfInt32([]int32{0, 1, -1, 443, math.MaxInt32, math.MinInt32}[pick(6)])
	case protoreflect.Uint32Kind, protoreflect.Fixed32Kind:
		return protoreflect.ValueOfUint32([]uint32{0, 1, 8443, math.MaxUint32}[pick(4)])
	case protoreflect.Int64Kind, protoreflect.Sint64Kind, protoreflect.Sfixed64Kind:
		return protoreflect.ValueOfInt64([]int64{0, -1, 1 << 40, math.MaxInt64, math.MinInt64}[pick(5)])
	case protoreflect.Uint64Kind, protoreflect.Fixed64Kind:
		return protoreflect.ValueOfUint64([]uint64{0, 7, math.MaxUint64}[pick(3)])
	case protoreflect.FloatKind:
		return protoreflect.ValueOfFloat32([]float32{0, 0.1, -2.5, 1e21, 1e-7, 3, float32(math.Inf(1)), float32(math.NaN()), 16777217, float32(math.Copysign(0, -1))}[pick(10)])
	case protoreflect.DoubleKind:
		return protoreflect.ValueOfFloat64([]float64{0, 0.1, 1e21, 1e20, 1e-7, 5e-324, 100, math.Inf(-1), math.NaN(), 1.5e300, math.Copysign(0, -1)}[pick(11)])
	case protoreflect.BytesKind:
		b := make([]byte, pick(40))
		for i := range b {
			b[i] = byte(pick(256))
		}
		return protoreflect.ValueOfBytes(b)
	case protoreflect.EnumKind:
		values := fd.Enum().Values()
		if pick(10) == 0 {
			return protoreflect.ValueOfEnum(protoreflect.EnumNumber(12345))
		}
		return protoreflect.ValueOfEnum(values.Get(pick(values.Len())).Number())
	}
	m := fresh.Message()
	if m.Descriptor().FullName() == "google.protobuf.Any" {
		a, _ := anypb.New(randomWellKnown(r, depth))
		if pick(15) == 0 {
			a.TypeUrl = "type.googleapis.com/not.a.Type"
		}
		proto.Merge(m.Interface(), a)
		return fresh
	}
	fillProto(r, m, depth+1)
	return fresh
}

// randomWellKnown is the content of a random Any.
func randomWellKnown(r *rand.Rand, depth int) proto.Message {
	switch r.IntN(7) {
	case 0:
		return durationpb.New(7500000000)
	case 1:
		return wrapperspb.UInt64(math.MaxUint64)
	case 2:
		return &emptypb.Empty{}
	case 3:
		s, _ := structpb.NewStruct(map[string]any{"a": 1.5, "b": []any{"x", true}})
		return s
	case 4:
		return wrapperspb.String(randomYAMLString(r))
	}
	m := (&tlsv3.UpstreamTlsContext{}).ProtoReflect()
	fillProto(r, m, depth+1)
	return m.Interface()
}

// TestDeclinedElementsGoTheOldWay: elements the walks decline (a Struct in
// a cluster's metadata, an Any of an unknown type, an object's duplicate
// key, non-ASCII) are written by the writer as the plain values they
// stand for would be, and an element protojson refuses fails naming it.
func TestDeclinedElementsGoTheOldWay(t *testing.T) {
	meta, err := structpb.NewStruct(map[string]any{"team": "shop", "weight": 1.5})
	if err != nil {
		t.Fatal(err)
	}
	withStruct := &clusterv3.Cluster{Name: "shop/pay", Metadata: &corev3.Metadata{FilterMetadata: map[string]*structpb.Struct{"tlsplane": meta}}}
	unknownAny := &clusterv3.Cluster{Name: "shop/any", TypedExtensionProtocolOptions: map[string]*anypb.Any{"x": {TypeUrl: "type.googleapis.com/not.a.Type"}}}
	plainCluster := &clusterv3.Cluster{Name: "shop/plain", ConnectTimeout: durationpb.New(5e9)}
	for _, m := range []proto.Message{withStruct} {
		if _, ok := emittedElement(nil, "clusters", protoNode{"cluster", m}); ok {
			t.Fatalf("the proto walk wrote %v, which it leaves to the old path", m)
		}
	}
	doc := map[string][]any{
		"clusters": {protoNode{"cluster shop/pay", withStruct}, protoNode{"cluster shop/plain", plainCluster}},
		"policies": {jsonText(`{"name":"a","name":"b"}`), jsonText(`{"name":"caf\u00e9"}`), jsonText(`{"spec":{"x":[1,2]}}`)},
	}
	plain := map[string][]any{}
	for k, list := range doc {
		for _, v := range list {
			p, err := plainValue(v)
			if err != nil {
				t.Fatal(err)
			}
			plain[k] = append(plain[k], p)
		}
	}
	var got, want bytes.Buffer
	if err := encodeYAMLLists(&got, doc); err != nil {
		t.Fatal(err)
	}
	if err := encodeYAMLLists(&want, plain); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got.Bytes(), want.Bytes()) {
		t.Fatalf("got:\n%s\nwant (plain values):\n%s", got.Bytes(), want.Bytes())
	}
	err = encodeYAMLLists(&got, map[string][]any{"clusters": {protoNode{"cluster shop/any", unknownAny}}})
	if err == nil || !strings.HasPrefix(err.Error(), "cluster shop/any: ") {
		t.Errorf("an Any of an unknown type: error %v, want one naming cluster shop/any", err)
	}
}
