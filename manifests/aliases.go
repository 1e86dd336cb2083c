package manifests

import (
	"bytes"
	"fmt"

	yamlv3 "go.yaml.in/yaml/v3"
)

// saturated stands for a size too large to count: billion laughs' nested
// aliases double a size per level, past any int64.
const saturated = int64(1) << 62

// AliasBytes is what a YAML document's aliases add to it once expanded
// (scalars and structure, not formatting), counted without expanding
// anything: an alias costs what its anchor costs, computed once. It is
// what the text does not show, so a large file without aliases costs
// nothing here: Limits.FileBytes bounds it. A document without '*' has no
// alias and adds nothing.
func AliasBytes(raw []byte) (int64, error) {
	if bytes.IndexByte(raw, '*') < 0 {
		return 0, nil
	}
	var root yamlv3.Node
	if err := yamlv3.Unmarshal(raw, &root); err != nil {
		return 0, err
	}
	// expanded counts aliases as their anchors' expanded size, written as
	// the anchors' text is not.
	type cost struct{ expanded, written int64 }
	memo := map[*yamlv3.Node]cost{}
	var size func(n *yamlv3.Node) cost
	size = func(n *yamlv3.Node) cost {
		if n == nil {
			return cost{}
		}
		if c, done := memo[n]; done {
			return c
		}
		memo[n] = cost{saturated, 0} // an alias of a node being counted is too large
		var c cost
		switch n.Kind {
		case yamlv3.AliasNode:
			c = cost{size(n.Alias).expanded, 0}
		case yamlv3.ScalarNode:
			s := int64(len(n.Value)) + 2
			c = cost{s, s}
		default:
			c = cost{2, 2}
			for _, child := range n.Content {
				cc := size(child)
				c.expanded = min(c.expanded+cc.expanded, saturated)
				c.written = min(c.written+cc.written, saturated)
			}
		}
		memo[n] = c
		return c
	}
	c := size(&root)
	return max(c.expanded-c.written, 0), nil
}

// expansionBudget is what is left of a file's Limits.AliasBytes.
type expansionBudget struct{ limit, left int64 }

// spend charges one document's alias expansion (the document numbered as
// Parse numbers them) to the budget, or says why it is refused.
func (b *expansionBudget) spend(path string, doc int, raw []byte) error {
	n, err := AliasBytes(raw)
	if err != nil {
		return fmt.Errorf("%s: document %d: %s", path, doc, excerptError(err))
	}
	if n > b.left {
		return fmt.Errorf("%s: document %d: refused: its YAML aliases expand the file by more than --%s (%s); raise it to read this file",
			path, doc, AliasBytesFlag, Bytes(b.limit))
	}
	b.left -= n
	return nil
}
