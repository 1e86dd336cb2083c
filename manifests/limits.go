package manifests

import (
	"bytes"
	"fmt"
	"io"
	"os"

	yamlv3 "go.yaml.in/yaml/v3"
)

// Bounds on what one manifest file may cost, whoever wrote it: a file
// (what is read from disk) and what its documents expand to once YAML
// aliases are resolved. A 1 MiB string aliased 300 times is a 1 MiB file
// that decodes to 300 MiB, and the decoders copy it several times over.
const (
	// MaxFileBytes bounds a manifest file; the API server takes objects of
	// about 1.5 MiB.
	MaxFileBytes = 16 << 20
	// MaxExpandedBytes bounds the text of a file's documents with every
	// alias expanded, summed over the file.
	MaxExpandedBytes = 16 << 20
)

// ReadFile reads a manifest file, refusing one over MaxFileBytes without
// reading more than that.
func ReadFile(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, MaxFileBytes+1))
	if err != nil {
		return nil, err
	}
	if len(data) > MaxFileBytes {
		return nil, fmt.Errorf("%s: file larger than %d bytes", path, MaxFileBytes)
	}
	return data, nil
}

// ExpandedSize is the size of a YAML document's text with its aliases
// expanded (scalars and structure, not formatting), counted without
// expanding anything: an alias costs what its anchor costs, computed once.
// It stops at limit and then returns a number above it. A document
// without '*' has no alias and costs its length.
func ExpandedSize(raw []byte, limit int64) (int64, error) {
	if bytes.IndexByte(raw, '*') < 0 {
		return int64(len(raw)), nil
	}
	var root yamlv3.Node
	if err := yamlv3.Unmarshal(raw, &root); err != nil {
		return 0, err
	}
	memo := map[*yamlv3.Node]int64{}
	var size func(n *yamlv3.Node) int64
	size = func(n *yamlv3.Node) int64 {
		if n == nil {
			return 0
		}
		if s, done := memo[n]; done {
			return s
		}
		memo[n] = limit + 1 // an alias of a node being counted is too large
		var s int64
		switch n.Kind {
		case yamlv3.AliasNode:
			s = size(n.Alias)
		case yamlv3.ScalarNode:
			s = int64(len(n.Value)) + 2
		default:
			s = 2
			for _, c := range n.Content {
				if s += size(c); s > limit {
					s = limit + 1
					break
				}
			}
		}
		memo[n] = s
		return s
	}
	return size(&root), nil
}

// expansionBudget is what is left of a file's MaxExpandedBytes.
type expansionBudget struct{ left int64 }

// spend charges one document (numbered as Parse numbers them) to the
// budget, or says why it is refused.
func (b *expansionBudget) spend(path string, doc int, raw []byte) error {
	n, err := ExpandedSize(raw, b.left)
	if err != nil {
		return fmt.Errorf("%s: document %d: %w", path, doc, err)
	}
	if n > b.left {
		return fmt.Errorf("%s: document %d: refused: with its YAML aliases expanded, the file's documents exceed %d bytes",
			path, doc, MaxExpandedBytes)
	}
	b.left -= n
	return nil
}
