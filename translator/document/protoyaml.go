package document

import (
	"encoding/base64"
	"fmt"
	"math"
	"strconv"
	"strings"
	"sync"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"
)

// protoNode is a resource in a document value: the YAML writer walks it
// straight into yamlEmitter (protojson's mapping, without its JSON and a
// generic tree per resource, which were half of rendering's CPU);
// plainValue turns it into ProtoValue's value for everything else. what
// names it in errors ("cluster shop/pay").
type protoNode struct {
	what string
	m    proto.Message
}

// plainValue is v with each protoNode replaced by ProtoValue's value and
// each jsonText decoded: what the document held before them, for JSON
// and for yaml.v2.
func plainValue(v any) (any, error) {
	switch v := v.(type) {
	case protoNode:
		p, err := ProtoValue(v.m)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", v.what, err)
		}
		return p, nil
	case jsonText:
		return decodeJSON(v)
	case map[string]any:
		out := make(map[string]any, len(v))
		for k, e := range v {
			p, err := plainValue(e)
			if err != nil {
				return nil, err
			}
			out[k] = p
		}
		return out, nil
	case []any:
		out := make([]any, len(v))
		for i, e := range v {
			p, err := plainValue(e)
			if err != nil {
				return nil, err
			}
			out[i] = p
		}
		return out, nil
	}
	return v, nil
}

// protoMessage writes m as yamlEmitter writes ProtoValue(m), or reports
// false for what it leaves to that path: unresolvable or invalid Any
// values, well-known types other than Any, Duration, Empty and the
// wrappers, extensions, key orders yaml.v2 does not settle, and whatever
// the emitter itself declines. TestProtoYAMLIsProtoValueYAML holds it to
// that path.
func (e *yamlEmitter) protoMessage(m protoreflect.Message, ctx yamlContext) bool {
	d := m.Descriptor()
	if d.FullName().Parent() == "google.protobuf" {
		switch d.Name() {
		case "Any":
			return e.protoAny(m)
		case "Duration":
			s, ok := protoDuration(m)
			return ok && e.stringScalar(s, ctx)
		case "BoolValue", "Int32Value", "Int64Value", "UInt32Value", "UInt64Value",
			"FloatValue", "DoubleValue", "StringValue", "BytesValue":
			fd := d.Fields().ByNumber(1)
			return e.protoSingular(m.Get(fd), fd, ctx)
		case "Empty":
		default:
			return false
		}
	}
	return e.protoFields(m, "")
}

// protoFields writes m's populated fields as a mapping, after an @type
// key when typeURL is set (an Any's message).
func (e *yamlEmitter) protoFields(m protoreflect.Message, typeURL string) bool {
	l := layoutOf(m.Descriptor())
	if !l.ordered {
		return false
	}
	var stack [16]protoreflect.FieldDescriptor
	present := stack[:0]
	for _, fd := range l.fields {
		if m.Has(fd) {
			present = append(present, fd)
		}
	}
	if l.extensible {
		extended := false
		m.Range(func(fd protoreflect.FieldDescriptor, _ protoreflect.Value) bool {
			extended = fd.IsExtension()
			return !extended
		})
		if extended {
			return false
		}
	}
	if len(present) == 0 && typeURL == "" {
		e.empty("{", "}")
		return true
	}
	e.pushIndent(false, false)
	if typeURL != "" {
		// Every field's JSON name starts with a letter (layout's ordered),
		// and yaml.v2 sorts "@type" before those.
		if !e.mappingKey("@type") || !e.stringScalar(typeURL, yamlContext{mapping: true}) {
			return false
		}
	}
	for _, fd := range present {
		if !e.mappingKey(fd.JSONName()) || !e.protoValue(m.Get(fd), fd, yamlContext{mapping: true}) {
			return false
		}
	}
	e.popIndent()
	return true
}

// protoAny writes an Any as protojson does: the resolved message's fields
// after "@type", or "@type" and "value" for a well-known type.
func (e *yamlEmitter) protoAny(m protoreflect.Message) bool {
	fds := m.Descriptor().Fields()
	fdType, fdValue := fds.ByNumber(1), fds.ByNumber(2)
	if !m.Has(fdType) {
		if m.Has(fdValue) {
			return false // protojson's error
		}
		e.empty("{", "}")
		return true
	}
	typeURL := m.Get(fdType).String()
	mt, err := protoregistry.GlobalTypes.FindMessageByURL(typeURL)
	if err != nil {
		return false
	}
	em := mt.New()
	err = proto.UnmarshalOptions{AllowPartial: true, Resolver: protoregistry.GlobalTypes}.Unmarshal(m.Get(fdValue).Bytes(), em.Interface())
	if err != nil {
		return false
	}
	if n := mt.Descriptor().FullName(); n.Parent() == "google.protobuf" && n.Name() != "Empty" {
		e.pushIndent(false, false)
		if !e.mappingKey("@type") || !e.stringScalar(typeURL, yamlContext{mapping: true}) ||
			!e.mappingKey("value") || !e.protoMessage(em, yamlContext{mapping: true}) {
			return false
		}
		e.popIndent()
		return true
	}
	return e.protoFields(em, typeURL)
}

// protoValue writes a field's value: a list, a map or a singular value.
func (e *yamlEmitter) protoValue(v protoreflect.Value, fd protoreflect.FieldDescriptor, ctx yamlContext) bool {
	switch {
	case fd.IsList():
		list := v.List()
		if list.Len() == 0 {
			e.empty("[", "]")
			return true
		}
		e.pushIndent(false, ctx.mapping && !e.indention)
		for i := range list.Len() {
			e.writeIndent()
			e.indicator("-", true, false, true)
			if !e.protoSingular(list.Get(i), fd, yamlContext{}) {
				return false
			}
		}
		e.popIndent()
		return true
	case fd.IsMap():
		return e.protoMap(v.Map(), fd.MapValue())
	}
	return e.protoSingular(v, fd, ctx)
}

// protoMap writes a map field as mapping writes the object protojson
// makes of it: keys as strings, in yaml.v2's order.
func (e *yamlEmitter) protoMap(mm protoreflect.Map, vd protoreflect.FieldDescriptor) bool {
	if mm.Len() == 0 {
		e.empty("{", "}")
		return true
	}
	keys := make([]string, 0, mm.Len())
	values := make(map[string]protoreflect.Value, mm.Len())
	mm.Range(func(k protoreflect.MapKey, v protoreflect.Value) bool {
		keys = append(keys, k.String())
		values[k.String()] = v
		return true
	})
	sortYAMLKeys(keys)
	if !yamlKeysOrdered(keys) {
		return false
	}
	e.pushIndent(false, false)
	for _, k := range keys {
		if !e.mappingKey(k) || !e.protoSingular(values[k], vd, yamlContext{mapping: true}) {
			return false
		}
	}
	e.popIndent()
	return true
}

// protoSingular writes one value as the node protojson's JSON of it
// decodes to: 64-bit integers and bytes as strings, other numbers as
// json.Number, enums by name.
func (e *yamlEmitter) protoSingular(v protoreflect.Value, fd protoreflect.FieldDescriptor, ctx yamlContext) bool {
	switch fd.Kind() {
	case protoreflect.BoolKind:
		return e.scalar(strconv.FormatBool(v.Bool()), yamlPlain, ctx)
	case protoreflect.StringKind:
		return e.stringScalar(v.String(), ctx)
	case protoreflect.Int32Kind, protoreflect.Sint32Kind, protoreflect.Sfixed32Kind:
		return e.scalar(strconv.FormatInt(v.Int(), 10), yamlPlain, ctx)
	case protoreflect.Uint32Kind, protoreflect.Fixed32Kind:
		return e.scalar(strconv.FormatUint(v.Uint(), 10), yamlPlain, ctx)
	case protoreflect.Int64Kind, protoreflect.Sint64Kind, protoreflect.Sfixed64Kind:
		return e.stringScalar(strconv.FormatInt(v.Int(), 10), ctx)
	case protoreflect.Uint64Kind, protoreflect.Fixed64Kind:
		return e.stringScalar(strconv.FormatUint(v.Uint(), 10), ctx)
	case protoreflect.FloatKind:
		return e.protoFloat(v.Float(), 32, ctx)
	case protoreflect.DoubleKind:
		return e.protoFloat(v.Float(), 64, ctx)
	case protoreflect.BytesKind:
		return e.stringScalar(base64.StdEncoding.EncodeToString(v.Bytes()), ctx)
	case protoreflect.EnumKind:
		if fd.Enum().FullName() == "google.protobuf.NullValue" {
			return e.scalar("null", yamlPlain, ctx)
		}
		if ev := fd.Enum().Values().ByNumber(v.Enum()); ev != nil {
			return e.stringScalar(string(ev.Name()), ctx)
		}
		return e.scalar(strconv.FormatInt(int64(v.Enum()), 10), yamlPlain, ctx)
	case protoreflect.MessageKind, protoreflect.GroupKind:
		return e.protoMessage(v.Message(), ctx)
	}
	return false
}

// protoFloat writes a float as the json.Number of protojson's text of it
// (NaN and the infinities are strings there).
func (e *yamlEmitter) protoFloat(f float64, bitSize int, ctx yamlContext) bool {
	switch {
	case math.IsNaN(f):
		return e.stringScalar("NaN", ctx)
	case math.IsInf(f, 1):
		return e.stringScalar("Infinity", ctx)
	case math.IsInf(f, -1):
		return e.stringScalar("-Infinity", ctx)
	}
	format := byte('f')
	if abs := math.Abs(f); abs != 0 {
		if bitSize == 64 && (abs < 1e-6 || abs >= 1e21) || bitSize == 32 && (float32(abs) < 1e-6 || float32(abs) >= 1e21) {
			format = 'e'
		}
	}
	s := strconv.FormatFloat(f, format, -1, bitSize)
	if n := len(s); format == 'e' && n >= 4 && s[n-4] == 'e' && s[n-3] == '-' && s[n-2] == '0' {
		s = s[:n-2] + s[n-1:]
	}
	return e.number(s, ctx)
}

// protoDuration is protojson's text of a Duration, or false where
// protojson refuses it.
func protoDuration(m protoreflect.Message) (string, bool) {
	fds := m.Descriptor().Fields()
	secs, nanos := m.Get(fds.ByNumber(1)).Int(), m.Get(fds.ByNumber(2)).Int()
	const maxSeconds = 315576000000
	if secs < -maxSeconds || secs > maxSeconds || nanos <= -1e9 || nanos >= 1e9 || secs > 0 && nanos < 0 || secs < 0 && nanos > 0 {
		return "", false
	}
	sign := ""
	if secs < 0 || nanos < 0 {
		sign, secs, nanos = "-", -secs, -nanos
	}
	x := fmt.Sprintf("%s%d.%09d", sign, secs, nanos)
	x = strings.TrimSuffix(x, "000")
	x = strings.TrimSuffix(x, "000")
	x = strings.TrimSuffix(x, ".000")
	return x + "s", true
}

// protoLayout is a message's fields in yaml.v2's order of their JSON
// names, made once per message type.
type protoLayout struct {
	fields []protoreflect.FieldDescriptor
	// ordered: yaml.v2's order holds between every two names and each
	// starts with a letter, so any subset keeps this order, with "@type"
	// first.
	ordered    bool
	extensible bool
}

var protoLayouts sync.Map // protoreflect.FullName → *protoLayout

func layoutOf(d protoreflect.MessageDescriptor) *protoLayout {
	if l, ok := protoLayouts.Load(d.FullName()); ok {
		return l.(*protoLayout)
	}
	fds := d.Fields()
	names := make([]string, fds.Len())
	byName := make(map[string]protoreflect.FieldDescriptor, fds.Len())
	l := &protoLayout{ordered: true, extensible: d.ExtensionRanges().Len() > 0}
	for i := range fds.Len() {
		fd := fds.Get(i)
		names[i] = fd.JSONName()
		byName[names[i]] = fd
		if c := names[i]; c == "" || !(c[0] >= 'a' && c[0] <= 'z' || c[0] >= 'A' && c[0] <= 'Z') {
			l.ordered = false
		}
	}
	sortYAMLKeys(names)
	l.ordered = l.ordered && yamlKeysOrdered(names) && len(byName) == len(names)
	for _, n := range names {
		l.fields = append(l.fields, byName[n])
	}
	actual, _ := protoLayouts.LoadOrStore(d.FullName(), l)
	return actual.(*protoLayout)
}
