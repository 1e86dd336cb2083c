package manifests

import (
	"strconv"
	"strings"
)

// A Gateway API object in block YAML goes to admission as a tree built
// from the parsed YAML: writing its JSON and decoding that again
// (crds.Decode) was a tenth of a directory's read.

// value is n as crds.Decode makes it of n's JSON: maps, []any, strings,
// int64, bools and nil (TestBlockTreeIsDecode). Strings are copies:
// the typed objects built from the tree outlive the file's bytes.
func (n *yamlNode) value() any {
	switch n.kind {
	case nodeMap:
		m := make(map[string]any, len(n.pairs))
		for _, kv := range n.pairs {
			m[strings.Clone(kv.key)] = kv.value.value()
		}
		return m
	case nodeSeq:
		items := make([]any, len(n.items))
		for i, item := range n.items {
			items[i] = item.value()
		}
		return items
	case nodeString:
		return strings.Clone(n.scalar)
	}
	switch n.scalar {
	case "null":
		return nil
	case "true":
		return true
	case "false":
		return false
	}
	i, err := strconv.ParseInt(n.scalar, 10, 64)
	if err != nil {
		panic("manifests: a verbatim scalar that is not an integer: " + n.scalar) // plainOrQuoted admits none
	}
	return i
}

// head is the object head decodeObject would find in n's JSON (scanHead,
// probeHead), when every part of it is a non-empty string, or absent
// where it may be; ok is false otherwise, and for a key that case-folds
// to a head key, which the probe would read as one.
func (n *yamlNode) head() (h objectHead, ok bool) {
	if n.kind != nodeMap {
		return h, false
	}
	for _, kv := range n.pairs {
		switch kv.key {
		case "apiVersion":
			h.apiVersion, ok = kv.value.plainString()
		case "kind":
			h.kind, ok = kv.value.plainString()
		case "metadata":
			ok = kv.value.kind == nodeMap && kv.value.metadataHead(&h)
		default:
			ok = !foldsTo(kv.key, "apiVersion", "kind", "metadata")
		}
		if !ok {
			return h, false
		}
	}
	return h, h.apiVersion != "" && h.kind != ""
}

func (n *yamlNode) metadataHead(h *objectHead) bool {
	for _, kv := range n.pairs {
		ok := true
		switch kv.key {
		case "name":
			h.name, ok = kv.value.plainString()
		case "namespace":
			h.namespace, ok = kv.value.plainString()
		default:
			ok = !foldsTo(kv.key, "name", "namespace")
		}
		if !ok {
			return false
		}
	}
	return true
}

// plainString is a string node's value, copied.
func (n *yamlNode) plainString() (string, bool) {
	if n.kind != nodeString {
		return "", false
	}
	return strings.Clone(n.scalar), true
}

// foldsTo says whether key is one of names in another case.
func foldsTo(key string, names ...string) bool {
	for _, name := range names {
		if key != name && strings.EqualFold(key, name) {
			return true
		}
	}
	return false
}
