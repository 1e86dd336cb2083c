package manifests

import (
	"bytes"
	"strconv"
	"strings"

	yamlv3 "go.yaml.in/yaml/v3"
)

// pathStep is one step of a field path: a mapping key, or a sequence
// index when index >= 0.
type pathStep struct {
	key   string
	index int
}

// fieldSteps splits a field.Path's string ("spec.rules[0].matches",
// "data[ca.crt]") into steps; a subscript of digits is an index, any
// other a key.
func fieldSteps(p string) []pathStep {
	var steps []pathStep
	for len(p) > 0 {
		switch p[0] {
		case '.':
			p = p[1:]
		case '[':
			end := strings.IndexByte(p, ']')
			if end < 0 {
				return append(steps, pathStep{key: p[1:], index: -1})
			}
			sub := p[1:end]
			if n, err := strconv.Atoi(sub); err == nil && n >= 0 {
				steps = append(steps, pathStep{index: n})
			} else {
				steps = append(steps, pathStep{key: sub, index: -1})
			}
			p = p[end+1:]
		default:
			end := strings.IndexAny(p, ".[")
			if end < 0 {
				end = len(p)
			}
			steps = append(steps, pathStep{key: p[:end], index: -1})
			p = p[end:]
		}
	}
	return steps
}

// documentRoot is raw's (one YAML or JSON document) root node, nil when
// raw does not parse.
func documentRoot(raw []byte) *yamlv3.Node {
	var doc yamlv3.Node
	if err := yamlv3.Unmarshal(raw, &doc); err != nil || len(doc.Content) == 0 {
		return nil
	}
	return doc.Content[0]
}

// lineOf is the 1-based line, within root's document, of the node at
// steps, or of its deepest ancestor the document has: a mapping entry's
// line is its key's. 0 when root is nil.
func lineOf(root *yamlv3.Node, steps []pathStep) int {
	if root == nil {
		return 0
	}
	node := root
	line := node.Line
	for _, s := range steps {
		for node.Kind == yamlv3.AliasNode && node.Alias != nil {
			node = node.Alias
		}
		next, at := child(node, s)
		if next == nil {
			break
		}
		node, line = next, at
	}
	return line
}

// child is node's child at step and the line that names it.
func child(node *yamlv3.Node, s pathStep) (*yamlv3.Node, int) {
	switch {
	case node.Kind == yamlv3.MappingNode && s.index < 0:
		for i := 0; i+1 < len(node.Content); i += 2 {
			if node.Content[i].Value == s.key {
				return node.Content[i+1], node.Content[i].Line
			}
		}
	case node.Kind == yamlv3.SequenceNode && s.index >= 0 && s.index < len(node.Content):
		return node.Content[s.index], node.Content[s.index].Line
	}
	return nil, 0
}

// documentLines is the 1-based line of the file where each of raws (the
// file's documents, as split returns them, each a run of the file's
// lines) starts.
func documentLines(data []byte, raws [][]byte) []int {
	starts := make([]int, len(raws))
	cursor, line := 0, 1
	for i, raw := range raws {
		at := bytes.Index(data[cursor:], raw)
		if at < 0 {
			starts[i] = line // not verbatim (a last line without newline): best effort
			continue
		}
		line += bytes.Count(data[cursor:cursor+at], []byte("\n"))
		starts[i] = line
		line += bytes.Count(raw, []byte("\n"))
		cursor += at + len(raw)
	}
	return starts
}

// ObjectKey names an object of a manifest file as the translator keys
// it: cluster-scoped objects have no namespace.
type ObjectKey struct{ Kind, Namespace, Name string }

// ObjectLines is, for each object of a manifest file (YAML or JSON, any
// number of documents, a v1 List's items too), the 1-based line where it
// starts; the first when two share a key. An object without a namespace
// is in DefaultNamespace unless its kind is cluster-scoped, as Parse
// reads it. YAML that does not parse ends the search (Parse reports it).
func ObjectLines(data []byte) map[ObjectKey]int {
	lines := map[ObjectKey]int{}
	dec := yamlv3.NewDecoder(bytes.NewReader(data))
	for {
		var doc yamlv3.Node
		if err := dec.Decode(&doc); err != nil {
			return lines
		}
		if len(doc.Content) > 0 {
			addObjectLines(lines, doc.Content[0], 0)
		}
	}
}

func addObjectLines(lines map[ObjectKey]int, n *yamlv3.Node, depth int) {
	if n.Kind != yamlv3.MappingNode {
		return
	}
	apiVersion, kind := scalarAt(n, "apiVersion"), scalarAt(n, "kind")
	if (kindKey{apiVersion, kind}) == (kindKey{"v1", "List"}) {
		if items, _ := child(n, pathStep{key: "items", index: -1}); items != nil && items.Kind == yamlv3.SequenceNode && depth < maxListDepth {
			for _, item := range items.Content {
				addObjectLines(lines, item, depth+1)
			}
		}
		return
	}
	meta, _ := child(n, pathStep{key: "metadata", index: -1})
	if meta == nil {
		return
	}
	key := ObjectKey{Kind: kind, Namespace: scalarAt(meta, "namespace"), Name: scalarAt(meta, "name")}
	switch {
	case kinds[kindKey{apiVersion, kind}].clusterScoped:
		key.Namespace = ""
	case key.Namespace == "":
		key.Namespace = DefaultNamespace
	}
	if _, ok := lines[key]; !ok {
		lines[key] = n.Line
	}
}

// scalarAt is the scalar value of key in mapping n, or "".
func scalarAt(n *yamlv3.Node, key string) string {
	if c, _ := child(n, pathStep{key: key, index: -1}); c != nil && c.Kind == yamlv3.ScalarNode {
		return c.Value
	}
	return ""
}
