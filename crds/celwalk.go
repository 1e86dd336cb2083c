package crds

import (
	"context"

	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/cel"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// celNode is one node of the library's CEL validator tree (cel.Validator:
// a schema node whose subtree has x-kubernetes-validations), split so that
// its own rules run alone and its children are walked here, with a memo
// between: the walk is the library's (Validator.validate, validateMap,
// validateArray on a create, where there is no old object), in its order,
// with the same paths and budget, and a subtree whose value was validated
// before without error is answered from the memo.
type celNode struct {
	// rules is the library's validator of this node with its children
	// cut off: the same compiled programs, schema and activation, so its
	// Validate runs this node's rules only.
	rules *cel.Validator
	// memoize is false at the resource root (each object's own) and for
	// allOf branches (their value is their parent's, memoized there).
	memoize bool
	// reads is what rules reads of the node's value, when known: its
	// own rules' answer is memoized on that (celreads.go).
	reads                *reads
	items                *celNode
	additionalProperties *celNode
	properties           map[string]*celNode
	allOf                []*celNode
}

// newCELNode mirrors v, the library's tree; allOf says v is an allOf
// branch, whose rules are not its schema's.
func newCELNode(v *cel.Validator, memoize, allOf bool) *celNode {
	if v == nil {
		return nil
	}
	rules := *v
	rules.Items, rules.AdditionalProperties, rules.Properties, rules.AllOfValidators = nil, nil, nil, nil
	if !allOf {
		useCELSchema(&rules, newCELSchema(rules.Schema))
	}
	n := &celNode{
		rules:                &rules,
		memoize:              memoize,
		items:                newCELNode(v.Items, true, false),
		additionalProperties: newCELNode(v.AdditionalProperties, true, false),
	}
	if memoize && len(v.Schema.XValidations) > 0 {
		// A node of the library's tree holds its schema's own rules
		// (unlike an allOf branch, left out by memoize).
		if r, err := rulesReads(v.Schema); err == nil {
			n.reads = r
		}
	}
	if v.Properties != nil {
		n.properties = make(map[string]*celNode, len(v.Properties))
		for k := range v.Properties {
			p := v.Properties[k]
			n.properties[k] = newCELNode(&p, true, false)
		}
	}
	for _, a := range v.AllOfValidators {
		if an := newCELNode(a, false, true); an != nil {
			n.allOf = append(n.allOf, an)
		}
	}
	return n
}

// validate is cel.Validator.Validate of obj at path within budget, as on
// a create: the same errors and remaining budget. A subtree's remembered
// cost is used only when it is below the remaining budget: every rule the
// library would run then finds budget left, as it did when remembered; at
// or above it, the rules run, and run out where the library's would.
func (n *celNode) validate(ctx context.Context, memo *valueMemo, path *field.Path, obj any, budget int64) (field.ErrorList, int64) {
	if n == nil || obj == nil {
		return nil, budget
	}
	if !n.memoize || memo == nil {
		return n.walk(ctx, memo, path, obj, budget)
	}
	sum, ok := canonicalSum(obj)
	if !ok {
		return n.walk(ctx, memo, path, obj, budget)
	}
	key := memoKey{node: n, sum: sum}
	if cost, ok := memo.get(key); ok && cost < budget {
		return nil, budget - cost
	}
	errs, remaining := n.walk(ctx, memo, path, obj, budget)
	// Only a pass is remembered: a refusal is re-run, so that its
	// messages and paths are this object's.
	if len(errs) == 0 && remaining >= 0 {
		memo.put(key, budget-remaining)
	}
	return errs, remaining
}

// walk is the library's validate: this node's rules, its allOf branches,
// then its items or properties, stopping when the budget runs out.
func (n *celNode) walk(ctx context.Context, memo *valueMemo, path *field.Path, obj any, budget int64) (errs field.ErrorList, remaining int64) {
	errs, remaining = n.ownRules(ctx, memo, path, obj, budget)
	if remaining < 0 {
		return errs, remaining
	}
	var more field.ErrorList
	for _, a := range n.allOf {
		more, remaining = a.validate(ctx, memo, path, obj, remaining)
		errs = append(errs, more...)
		if remaining < 0 {
			return errs, remaining
		}
	}
	switch obj := obj.(type) {
	case []any:
		if n.items == nil {
			return errs, remaining
		}
		for i := range obj {
			more, remaining = n.items.validate(ctx, memo, path.Index(i), obj[i], remaining)
			errs = append(errs, more...)
			if remaining < 0 {
				return errs, remaining
			}
		}
	case map[string]any:
		// The library ranges over the object twice, additional
		// properties first, in Go's map order, as here.
		if n.additionalProperties != nil {
			for k, v := range obj {
				more, remaining = n.additionalProperties.validate(ctx, memo, path.Key(k), v, remaining)
				errs = append(errs, more...)
				if remaining < 0 {
					return errs, remaining
				}
			}
		}
		if n.properties != nil {
			for k, v := range obj {
				sub, ok := n.properties[k]
				if !ok {
					continue
				}
				more, remaining = sub.validate(ctx, memo, path.Child(k), v, remaining)
				errs = append(errs, more...)
				if remaining < 0 {
					return errs, remaining
				}
			}
		}
	}
	return errs, remaining
}

// ownRules is the library's validateExpressions of this node: its rules
// on obj. Their remembered cost, for a value that reads the same to
// them, is used under the same condition as a subtree's.
func (n *celNode) ownRules(ctx context.Context, memo *valueMemo, path *field.Path, obj any, budget int64) (field.ErrorList, int64) {
	if n.reads == nil || memo == nil {
		return n.rules.Validate(ctx, path, nil, obj, nil, budget)
	}
	sum, ok := projectedSum(obj, n.reads)
	if !ok {
		return n.rules.Validate(ctx, path, nil, obj, nil, budget)
	}
	key := memoKey{node: n, own: true, sum: sum}
	if cost, ok := memo.get(key); ok && cost < budget {
		return nil, budget - cost
	}
	errs, remaining := n.rules.Validate(ctx, path, nil, obj, nil, budget)
	if len(errs) == 0 && remaining >= 0 {
		memo.put(key, budget-remaining)
	}
	return errs, remaining
}
