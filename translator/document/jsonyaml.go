package document

import (
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
	"unsafe"
)

// jsonText is an API object's JSON (encoding/json's) in a document value:
// the YAML writer walks the text straight into yamlEmitter, keys sorted
// per object, instead of decoding it into a generic tree first (that
// decoding was half of rendering the objects); plainValue decodes it as
// before for JSON and for yaml.v2.
type jsonText []byte

// jsonValueText writes the JSON value in b as yamlEmitter writes
// decodeJSON(b), or reports false for what it leaves to that path:
// surrogate escapes, duplicate keys, malformed text, and whatever the
// emitter itself declines.
func (e *yamlEmitter) jsonValueText(b []byte, ctx yamlContext) bool {
	b = trimJSONSpace(b)
	if len(b) == 0 {
		return false
	}
	switch b[0] {
	case '{':
		return e.jsonObject(b, ctx)
	case '[':
		return e.jsonArray(b, ctx)
	case '"':
		s, n, ok := jsonString(b)
		return ok && n == len(b) && e.stringScalar(s, ctx)
	case 't', 'f', 'n':
		switch string(b) {
		case "true", "false", "null":
			return e.scalar(string(b), yamlPlain, ctx)
		}
		return false
	}
	if !jsonNumber(b) {
		return false
	}
	return e.number(string(b), ctx)
}

// jsonMember is one key of an object and its value's text.
type jsonMember struct {
	key   string
	value []byte
}

func (e *yamlEmitter) jsonObject(b []byte, ctx yamlContext) bool {
	var stack [16]jsonMember
	members := stack[:0]
	i := skipJSONSpace(b, 1)
	if i < len(b) && b[i] == '}' {
		if skipJSONSpace(b, i+1) != len(b) {
			return false
		}
		e.empty("{", "}")
		return true
	}
	for {
		if i >= len(b) || b[i] != '"' {
			return false
		}
		key, n, ok := jsonString(b[i:])
		if !ok {
			return false
		}
		i = skipJSONSpace(b, i+n)
		if i >= len(b) || b[i] != ':' {
			return false
		}
		start := skipJSONSpace(b, i+1)
		end, ok := skipJSONValue(b, start)
		if !ok {
			return false
		}
		members = append(members, jsonMember{key, b[start:end]})
		i = skipJSONSpace(b, end)
		if i < len(b) && b[i] == ',' {
			i = skipJSONSpace(b, i+1)
			continue
		}
		if i >= len(b) || b[i] != '}' || skipJSONSpace(b, i+1) != len(b) {
			return false
		}
		break
	}
	slices.SortFunc(members, func(a, b jsonMember) int { return yamlKeyCompare(a.key, b.key) })
	digits := false
	for j, m := range members {
		if j > 0 && m.key == members[j-1].key {
			return false // decodeJSON keeps the last: left to it
		}
		digits = digits || strings.ContainsAny(m.key, "0123456789")
	}
	if digits {
		keys := make([]string, len(members))
		for j, m := range members {
			keys[j] = m.key
		}
		if !yamlKeysOrdered(keys) {
			return false
		}
	}
	e.pushIndent(false, false)
	for _, m := range members {
		if !e.mappingKey(m.key) || !e.jsonValueText(m.value, yamlContext{mapping: true}) {
			return false
		}
	}
	e.popIndent()
	return true
}

func (e *yamlEmitter) jsonArray(b []byte, ctx yamlContext) bool {
	i := skipJSONSpace(b, 1)
	if i < len(b) && b[i] == ']' {
		if skipJSONSpace(b, i+1) != len(b) {
			return false
		}
		e.empty("[", "]")
		return true
	}
	e.pushIndent(false, ctx.mapping && !e.indention)
	for {
		end, ok := skipJSONValue(b, i)
		if !ok {
			return false
		}
		e.writeIndent()
		e.indicator("-", true, false, true)
		if !e.jsonValueText(b[i:end], yamlContext{}) {
			return false
		}
		i = skipJSONSpace(b, end)
		if i < len(b) && b[i] == ',' {
			i = skipJSONSpace(b, i+1)
			continue
		}
		if i >= len(b) || b[i] != ']' || skipJSONSpace(b, i+1) != len(b) {
			return false
		}
		break
	}
	e.popIndent()
	return true
}

// jsonString decodes the string at the start of b and reports the bytes
// it took; false for a surrogate escape or malformed text.
func jsonString(b []byte) (string, int, bool) {
	i := 1
	for i < len(b) && b[i] != '"' && b[i] != '\\' && b[i] >= 0x20 {
		i++
	}
	if i < len(b) && b[i] == '"' {
		// The text is the element's own and never changes while it is
		// written: its strings need no copy (one allocation each was
		// most of the walk's garbage).
		return unsafe.String(unsafe.SliceData(b[1:i]), i-1), i + 1, true
	}
	out := append([]byte(nil), b[1:i]...)
	for i < len(b) {
		c := b[i]
		switch {
		case c == '"':
			return string(out), i + 1, true
		case c < 0x20:
			return "", 0, false
		case c != '\\':
			out = append(out, c)
			i++
			continue
		}
		if i+1 >= len(b) {
			return "", 0, false
		}
		switch b[i+1] {
		case '"', '\\', '/':
			out = append(out, b[i+1])
		case 'b':
			out = append(out, '\b')
		case 'f':
			out = append(out, '\f')
		case 'n':
			out = append(out, '\n')
		case 'r':
			out = append(out, '\r')
		case 't':
			out = append(out, '\t')
		case 'u':
			if i+6 > len(b) {
				return "", 0, false
			}
			r, err := strconv.ParseUint(string(b[i+2:i+6]), 16, 16)
			if err != nil || r >= 0xd800 && r <= 0xdfff {
				return "", 0, false
			}
			out = utf8.AppendRune(out, rune(r))
			i += 6
			continue
		default:
			return "", 0, false
		}
		i += 2
	}
	return "", 0, false
}

// skipJSONValue is the end of the value starting at b[i].
func skipJSONValue(b []byte, i int) (int, bool) {
	if i >= len(b) {
		return 0, false
	}
	switch b[i] {
	case '"':
		_, n, ok := jsonString(b[i:])
		return i + n, ok
	case '{', '[':
		depth := 0
		for ; i < len(b); i++ {
			switch b[i] {
			case '{', '[':
				depth++
			case '}', ']':
				if depth--; depth == 0 {
					return i + 1, true
				}
			case '"':
				_, n, ok := jsonString(b[i:])
				if !ok {
					return 0, false
				}
				i += n - 1
			}
		}
		return 0, false
	}
	j := i
	for j < len(b) && !isJSONSpace(b[j]) && b[j] != ',' && b[j] != '}' && b[j] != ']' {
		j++
	}
	return j, j > i
}

// jsonNumber reports whether b is a JSON number, as decodeJSON would
// keep it in a json.Number.
func jsonNumber(b []byte) bool {
	i := 0
	if i < len(b) && b[i] == '-' {
		i++
	}
	digits := func() int {
		j := i
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			i++
		}
		return i - j
	}
	if i < len(b) && b[i] == '0' {
		i++
	} else if digits() == 0 {
		return false
	}
	if i < len(b) && b[i] == '.' {
		i++
		if digits() == 0 {
			return false
		}
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		if digits() == 0 {
			return false
		}
	}
	return i == len(b)
}

func isJSONSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

func skipJSONSpace(b []byte, i int) int {
	for i < len(b) && isJSONSpace(b[i]) {
		i++
	}
	return i
}

func trimJSONSpace(b []byte) []byte {
	i := skipJSONSpace(b, 0)
	j := len(b)
	for j > i && isJSONSpace(b[j-1]) {
		j--
	}
	return b[i:j]
}
