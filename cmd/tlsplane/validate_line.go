package main

import (
	"bytes"

	"go.yaml.in/yaml/v3"
	"k8s.io/apimachinery/pkg/types"

	"github.com/tlsplane/tlsplane/manifests"
)

// objectLine is the line in a manifest file (YAML or JSON, any number of
// documents, `kind: List` too) where the object of kind and nn starts, or
// 0 when it is not found. An object without a namespace is in
// manifests.DefaultNamespace, unless nn has none (cluster-scoped).
func objectLine(data []byte, kind string, nn types.NamespacedName) int {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	for range maxLineDocuments {
		var doc yaml.Node
		// The end, or YAML the reader refused already: no line.
		if err := dec.Decode(&doc); err != nil {
			return 0
		}
		if len(doc.Content) == 0 {
			continue
		}
		if line := lineIn(doc.Content[0], kind, nn, 0); line > 0 {
			return line
		}
	}
	return 0
}

// maxLineDocuments bounds the search (the reader's own limits bound a file).
const maxLineDocuments = 1 << 20

func lineIn(n *yaml.Node, kind string, nn types.NamespacedName, depth int) int {
	if n.Kind != yaml.MappingNode || depth > 4 {
		return 0
	}
	apiVersion, k := scalar(n, "apiVersion"), scalar(n, "kind")
	if apiVersion == "v1" && k == "List" {
		if items := child(n, "items"); items != nil && items.Kind == yaml.SequenceNode {
			for _, item := range items.Content {
				if line := lineIn(item, kind, nn, depth+1); line > 0 {
					return line
				}
			}
		}
		return 0
	}
	if k != kind {
		return 0
	}
	meta := child(n, "metadata")
	if meta == nil || scalar(meta, "name") != nn.Name {
		return 0
	}
	ns := scalar(meta, "namespace")
	if nn.Namespace != "" && ns == "" {
		ns = manifests.DefaultNamespace
	}
	if nn.Namespace != "" && ns != nn.Namespace {
		return 0
	}
	return n.Line
}

// child is the value of key in mapping n, or nil.
func child(n *yaml.Node, key string) *yaml.Node {
	if n.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == key {
			return n.Content[i+1]
		}
	}
	return nil
}

func scalar(n *yaml.Node, key string) string {
	if c := child(n, key); c != nil && c.Kind == yaml.ScalarNode {
		return c.Value
	}
	return ""
}
