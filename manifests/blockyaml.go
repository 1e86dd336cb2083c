package manifests

import (
	"encoding/json"
	"slices"
	"strings"
	"sync"
	"unsafe"
)

// blockYAMLToJSON is what sigs.k8s.io/yaml's YAMLToJSON makes of raw, for
// the YAML generated manifests are written in: block mappings and
// sequences of printable ASCII, plain and quoted scalars without escapes,
// `|` blocks, flow collections of scalars on one line. It returns false
// for anything else (anchors, tags, other block styles, multi-line
// scalars, keys or values YAML 1.1 reads as another type than a string
// or a decimal integer, duplicate keys), which YAMLToJSON then converts.
// It exists because YAMLToJSON (yaml.v2's parser, a generic tree, then
// encoding/json) was most of the cost of reading manifests;
// TestBlockYAMLToJSONIsYAMLToJSON holds it to YAMLToJSON's bytes.
func blockYAMLToJSON(raw []byte) ([]byte, bool) {
	p, root, ok := parseBlockYAML(raw)
	if !ok {
		return nil, false
	}
	defer p.release()
	return root.appendJSON(make([]byte, 0, len(raw)+len(raw)/4)), true
}

// parseBlockYAML parses raw as blockYAMLToJSON reads it; root and what it
// holds are p's, valid until the caller releases p. ok is false, and
// nothing is to be released, for a document blockYAMLToJSON refuses.
func parseBlockYAML(raw []byte) (p *blockParser, root *yamlNode, ok bool) {
	// A `|` block ending the text keeps its last newline only when the
	// text has one.
	if len(raw) == 0 || raw[len(raw)-1] != '\n' {
		return nil, nil, false
	}
	for _, c := range raw {
		if c != '\n' && (c < 0x20 || c > 0x7e) {
			return nil, nil, false
		}
	}
	p = parsers.Get().(*blockParser)
	p.reset(raw)
	p.skip()
	// The YAML reader leaves a file's leading document marker on its
	// first document (helm template's output starts so).
	if p.i < len(p.lines) && p.lines[p.i] == "---" {
		p.i++
		p.skip()
	}
	if p.i < len(p.lines) && indentOf(p.lines[p.i]) == 0 && !isSeqItem(p.lines[p.i]) {
		if root, ok = p.mapping(0); ok {
			if p.skip(); p.i == len(p.lines) {
				return p, root, true
			}
		}
	}
	p.release()
	return nil, nil, false
}

// yamlNode is a parsed value: a mapping (pairs), a sequence (items), or
// a scalar: a string, or text JSON writes as it is (an integer, true,
// false, null).
type yamlNode struct {
	pairs  []yamlPair
	items  []*yamlNode
	kind   nodeKind
	scalar string
}

type yamlPair struct {
	key   string
	value *yamlNode
}

type nodeKind uint8

const (
	nodeString nodeKind = iota
	nodeVerbatim
	nodeMap
	nodeSeq
)

// null is the one node of every absent value.
var null = &yamlNode{kind: nodeVerbatim, scalar: "null"}

func (n *yamlNode) appendJSON(out []byte) []byte {
	switch n.kind {
	case nodeMap:
		// encoding/json writes a map's keys sorted; keys are unique.
		slices.SortFunc(n.pairs, func(a, b yamlPair) int { return strings.Compare(a.key, b.key) })
		out = append(out, '{')
		for j, kv := range n.pairs {
			if j > 0 {
				out = append(out, ',')
			}
			out = appendJSONString(out, kv.key)
			out = append(out, ':')
			out = kv.value.appendJSON(out)
		}
		return append(out, '}')
	case nodeSeq:
		out = append(out, '[')
		for j, item := range n.items {
			if j > 0 {
				out = append(out, ',')
			}
			out = item.appendJSON(out)
		}
		return append(out, ']')
	case nodeString:
		return appendJSONString(out, n.scalar)
	}
	return append(out, n.scalar...)
}

// hasKey says whether the mapping n has key.
func (n *yamlNode) hasKey(key string) bool {
	for _, kv := range n.pairs {
		if kv.key == key {
			return true
		}
	}
	return false
}

// appendJSONString writes s as encoding/json does (HTML characters
// escaped).
func appendJSONString(out []byte, s string) []byte {
	if strings.ContainsAny(s, "\"\\<>&\n") {
		b, _ := json.Marshal(s)
		return append(out, b...)
	}
	out = append(out, '"')
	out = append(out, s...)
	return append(out, '"')
}

type blockParser struct {
	lines []string
	i     int
	// chunks hold the nodes of one document; the next one reuses them,
	// each node with its slices' room.
	chunks      [][]yamlNode
	chunk, used int
}

// parsers keep parsers between documents: a document's tree is dropped
// once its JSON is written, and its storage serves the next document.
var parsers = sync.Pool{New: func() any { return new(blockParser) }}

const (
	chunkNodes = 256
	// keptChunks bounds what a parser keeps after a large document.
	keptChunks = 16
)

// reset readies p for raw: its lines, keys and scalars are substrings of
// raw, without a copy, since nothing of the tree outlives the JSON
// written from it.
func (p *blockParser) reset(raw []byte) {
	text := unsafe.String(unsafe.SliceData(raw), len(raw))
	p.lines = p.lines[:0]
	for {
		i := strings.IndexByte(text, '\n')
		if i < 0 {
			p.lines = append(p.lines, text)
			break
		}
		p.lines = append(p.lines, text[:i])
		text = text[i+1:]
	}
	p.i, p.chunk, p.used = 0, 0, 0
}

func (p *blockParser) release() {
	clear(p.lines) // raw goes with its document
	if len(p.chunks) > keptChunks {
		p.chunks = p.chunks[:keptChunks]
	}
	parsers.Put(p)
}

// node is a new node of kind.
func (p *blockParser) node(kind nodeKind, scalar string) *yamlNode {
	if p.chunk == len(p.chunks) {
		p.chunks = append(p.chunks, make([]yamlNode, chunkNodes))
	}
	n := &p.chunks[p.chunk][p.used]
	if p.used++; p.used == chunkNodes {
		p.chunk, p.used = p.chunk+1, 0
	}
	n.kind, n.scalar, n.pairs, n.items = kind, scalar, n.pairs[:0], n.items[:0]
	return n
}

// skip passes blank and comment lines.
func (p *blockParser) skip() {
	for p.i < len(p.lines) {
		t := strings.TrimLeft(p.lines[p.i], " ")
		if len(t) > 0 && t[0] != '#' {
			return
		}
		p.i++
	}
}

func indentOf(line string) int { return len(line) - len(strings.TrimLeft(line, " ")) }

func isSeqItem(line string) bool {
	t := strings.TrimLeft(line, " ")
	return len(t) > 0 && t[0] == '-' && (len(t) == 1 || t[1] == ' ')
}

// mapping parses the block mapping whose keys are at column indent; the
// first line may be a sequence item's, its key after the `- `.
func (p *blockParser) mapping(indent int) (*yamlNode, bool) {
	n := p.node(nodeMap, "")
	first := true
	for {
		if !first {
			p.skip()
			if p.i >= len(p.lines) {
				return n, true
			}
			// A shallower line, or a sequence item at the keys' column,
			// ends the mapping; the caller judges what follows.
			line := p.lines[p.i]
			in := indentOf(line)
			if in < indent || in == indent && isSeqItem(line) {
				return n, true
			}
			if in > indent {
				return nil, false
			}
		}
		text := strings.TrimRight(p.lines[p.i][indent:], " ")
		first = false
		key, rest, ok := splitKey(text)
		if !ok || n.hasKey(key) {
			return nil, false
		}
		p.i++
		v, ok := p.value(rest, indent, true)
		if !ok {
			return nil, false
		}
		n.pairs = append(n.pairs, yamlPair{key, v})
	}
}

// value parses what follows a key (or a sequence item's `- `) at column
// indent: a scalar on the line, a `|` block, or a nested block.
func (p *blockParser) value(rest string, indent int, inMapping bool) (*yamlNode, bool) {
	switch {
	case rest == "":
		p.skip()
		if p.i >= len(p.lines) {
			return null, true
		}
		line := p.lines[p.i]
		in := indentOf(line)
		switch {
		case in > indent && isSeqItem(line):
			return p.sequence(in)
		case in > indent:
			return p.mapping(in)
		case in == indent && inMapping && isSeqItem(line):
			return p.sequence(in)
		}
		return null, true
	case rest == "|":
		return p.literal(indent)
	}
	if next := p.peekIndent(); next > indent {
		return nil, false // a scalar continued on the next line
	}
	return p.scalarNode(rest)
}

// peekIndent is the indentation of the next line that is not blank or a
// comment, or -1.
func (p *blockParser) peekIndent() int {
	for j := p.i; j < len(p.lines); j++ {
		t := strings.TrimLeft(p.lines[j], " ")
		if len(t) > 0 && t[0] != '#' {
			return indentOf(p.lines[j])
		}
	}
	return -1
}

// sequence parses the block sequence whose `-` are at column indent.
func (p *blockParser) sequence(indent int) (*yamlNode, bool) {
	n := p.node(nodeSeq, "")
	for {
		p.skip()
		if p.i >= len(p.lines) {
			return n, true
		}
		line := p.lines[p.i]
		if in := indentOf(line); in < indent {
			return n, true
		} else if in > indent || !isSeqItem(line) {
			if in > indent {
				return nil, false
			}
			return n, true
		}
		after := line[indent+1:]
		item := strings.TrimLeft(after, " ")
		col := indent + 1 + len(after) - len(item)
		text := strings.TrimRight(item, " ")
		var v *yamlNode
		var ok bool
		switch {
		case text == "" || text == "|" || strings.HasPrefix(text, "- ") || text == "-":
			return nil, false
		case looksLikeKey(text):
			v, ok = p.mapping(col)
		default:
			p.i++
			v, ok = p.value(text, indent, false)
		}
		if !ok {
			return nil, false
		}
		n.items = append(n.items, v)
	}
}

// literal parses a `|` block (clipped) under a key at column indent:
// without blank lines, each line at least as indented as the first.
func (p *blockParser) literal(indent int) (*yamlNode, bool) {
	var b strings.Builder
	block := -1
	for ; p.i < len(p.lines); p.i++ {
		line := p.lines[p.i]
		in := indentOf(line)
		if in == len(line) {
			if p.i == len(p.lines)-1 && len(line) == 0 {
				break // the document's final newline
			}
			return nil, false
		}
		if in <= indent {
			break
		}
		if block < 0 {
			block = in
		}
		if in < block {
			return nil, false
		}
		b.WriteString(line[block:])
		b.WriteByte('\n')
	}
	if block < 0 {
		return nil, false
	}
	return p.node(nodeString, b.String()), true
}

// looksLikeKey reports whether a sequence item's text starts a mapping.
func looksLikeKey(text string) bool {
	_, _, ok := splitKey(text)
	return ok || strings.Contains(text, ": ") || strings.HasSuffix(text, ":")
}

// splitKey splits `key: rest` (or `key:`) where key is a plain key that
// YAML 1.1 reads as a string.
func splitKey(text string) (key, rest string, ok bool) {
	i := strings.IndexByte(text, ':')
	if i <= 0 || i+1 < len(text) && text[i+1] != ' ' {
		return "", "", false
	}
	key, rest = text[:i], strings.TrimLeft(text[i+1:], " ")
	for j := 0; j < len(key); j++ {
		if c := key[j]; !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '-' || c == '_' || c == '/') {
			return "", "", false
		}
	}
	if !isLetter(key[0]) || yaml11NonString[key] {
		return "", "", false
	}
	return key, rest, true
}

func isLetter(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }

// yaml11NonString are the words starting with a letter that yaml.v2
// reads as a bool or null (and sigs.k8s.io/yaml writes so).
var yaml11NonString = map[string]bool{
	"y": true, "Y": true, "yes": true, "Yes": true, "YES": true, "n": true, "N": true, "no": true, "No": true, "NO": true,
	"true": true, "True": true, "TRUE": true, "false": true, "False": true, "FALSE": true,
	"on": true, "On": true, "ON": true, "off": true, "Off": true, "OFF": true, "null": true, "Null": true, "NULL": true,
}

// scalarNode is a scalar, or a one-line flow collection of scalars.
func (p *blockParser) scalarNode(text string) (*yamlNode, bool) {
	switch text[0] {
	case '[':
		items, ok := flowItems(text, '[', ']')
		if !ok {
			return nil, false
		}
		n := p.node(nodeSeq, "")
		for _, it := range items {
			v, ok := p.flowScalar(it)
			if !ok {
				return nil, false
			}
			n.items = append(n.items, v)
		}
		return n, true
	case '{':
		items, ok := flowItems(text, '{', '}')
		if !ok {
			return nil, false
		}
		n := p.node(nodeMap, "")
		for _, it := range items {
			key, rest, ok := splitKey(it)
			if !ok || rest == "" || n.hasKey(key) {
				return nil, false
			}
			v, ok := p.flowScalar(rest)
			if !ok {
				return nil, false
			}
			n.pairs = append(n.pairs, yamlPair{key, v})
		}
		return n, true
	}
	return p.plainOrQuoted(text, false)
}

// flowItems splits `[a, b]` or `{a: 1, b: 2}` on commas; nested
// collections and quoted commas are not handled.
func flowItems(text string, open, close byte) ([]string, bool) {
	if text[len(text)-1] != close {
		return nil, false
	}
	inner := strings.TrimSpace(text[1 : len(text)-1])
	if strings.ContainsAny(inner, "[]{}'#") || strings.Count(inner, `"`)%2 != 0 {
		return nil, false
	}
	if inner == "" {
		return nil, true
	}
	parts := strings.Split(inner, ",")
	for i, s := range parts {
		if parts[i] = strings.TrimSpace(s); parts[i] == "" {
			return nil, false
		}
		if open == '[' && strings.Contains(parts[i], ":") && parts[i][0] != '"' {
			return nil, false
		}
	}
	return parts, true
}

// flowScalar is a quoted scalar, or a plain one of letters, digits and
// `._/-` (libyaml refuses more in flow context than YAML does).
func (p *blockParser) flowScalar(text string) (*yamlNode, bool) {
	if text[0] != '"' && text[0] != '\'' && strings.IndexFunc(text, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '.' || r == '_' || r == '/' || r == '-')
	}) >= 0 {
		return nil, false
	}
	return p.plainOrQuoted(text, true)
}

// plainOrQuoted is a plain scalar (a string, or a decimal integer), or a
// quoted one without escapes.
func (p *blockParser) plainOrQuoted(text string, flow bool) (*yamlNode, bool) {
	switch c := text[0]; {
	case c == '"' || c == '\'':
		if len(text) < 2 || text[len(text)-1] != c {
			return nil, false
		}
		s := text[1 : len(text)-1]
		if strings.ContainsAny(s, `"'\`) {
			return nil, false
		}
		return p.node(nodeString, s), true
	case c >= '0' && c <= '9':
		if len(text) > 18 || c == '0' && len(text) > 1 || strings.IndexFunc(text, func(r rune) bool { return r < '0' || r > '9' }) >= 0 {
			return nil, false
		}
		return p.node(nodeVerbatim, text), true
	case c == '/' || isLetter(c):
	default:
		return nil, false
	}
	if strings.Contains(text, " #") || strings.Contains(text, ": ") || strings.HasSuffix(text, ":") || flow && strings.ContainsAny(text, ":") {
		return nil, false
	}
	switch text {
	case "true", "false", "null":
		return p.node(nodeVerbatim, text), true
	}
	if yaml11NonString[text] {
		return nil, false
	}
	return p.node(nodeString, text), true
}
