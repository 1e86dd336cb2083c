package crds

import (
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"

	celast "github.com/google/cel-go/common/ast"
	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	apiservercel "k8s.io/apiserver/pkg/cel"
	"k8s.io/apiserver/pkg/cel/environment"
)

// reads is what of a node's value its CEL rules can see: a rule's result
// and cost are a function of what it reads, so two values that agree on
// it get the same answer. It over-approximates: a value a rule uses in
// any way but selecting a field, indexing, iterating or taking a list's
// size is read whole.
type reads struct {
	// whole: every byte of the value.
	whole bool
	// fields read of an object (or keys of a map), by property name.
	fields map[string]*reads
	// items is what is read of each element of a list; a list reached is
	// always read for its length.
	items *reads
	// equal: a string compared only for equality with the strings at the
	// same place (as x.name == y.name, x and y items of the same lists):
	// which of them are equal, and their lengths (the comparison's cost),
	// are all that is read.
	equal bool
}

func (r *reads) field(name string) *reads {
	if r.fields == nil {
		r.fields = map[string]*reads{}
	}
	if r.fields[name] == nil {
		r.fields[name] = &reads{}
	}
	return r.fields[name]
}

func (r *reads) item() *reads {
	if r.items == nil {
		r.items = &reads{}
	}
	return r.items
}

// ruleParser parses rules as the API server compiles stored ones, macros
// included, so the trees read here are the programs run.
var ruleParser = environment.MustBaseEnvSet(environment.DefaultCompatibilityVersion()).StoredExpressionsEnv()

// rulesReads is what the rules of node s read of its value, or an error
// when a rule cannot be read here (it is then not memoized by it).
func rulesReads(s *structuralschema.Structural) (*reads, error) {
	root := &reads{}
	for _, rule := range s.XValidations {
		if strings.Contains(rule.Rule, "oldSelf") {
			return nil, fmt.Errorf("rule %q: a transition rule", rule.Rule)
		}
		if strings.TrimSpace(rule.Rule) == "" {
			continue
		}
		ast, iss := ruleParser.Parse(rule.Rule)
		if iss != nil && iss.Err() != nil {
			return nil, fmt.Errorf("rule %q: %w", rule.Rule, iss.Err())
		}
		w := readWalk{scope: map[string]*valueAt{"self": {r: root, s: s}}}
		w.use(w.eval(ast.NativeRep().Expr()))
	}
	return root, nil
}

// valueAt is an expression that stands for a part of self: what of it is
// read, and its schema.
type valueAt struct {
	r *reads
	s *structuralschema.Structural
}

type readWalk struct {
	// scope binds identifiers to parts of self; nil for one that is not.
	scope map[string]*valueAt
}

// use records that v's value is used as a whole.
func (w readWalk) use(v *valueAt) {
	if v != nil {
		v.r.whole = true
	}
}

// eval is the part of self e stands for, if any, having recorded what e
// reads.
func (w readWalk) eval(e celast.Expr) *valueAt {
	switch e.Kind() {
	case celast.IdentKind:
		return w.scope[e.AsIdent()]
	case celast.SelectKind:
		sel := e.AsSelect()
		op := w.eval(sel.Operand())
		if op == nil {
			return nil
		}
		name, sub, ok := property(op.s, sel.FieldName())
		if !ok {
			w.use(op)
			return nil
		}
		at := &valueAt{r: op.r.field(name), s: sub}
		if sel.IsTestOnly() {
			return nil // has(): the field's presence, which its parent's encoding shows
		}
		return at
	case celast.CallKind:
		return w.call(e.AsCall())
	case celast.ComprehensionKind:
		w.comprehension(e.AsComprehension())
		return nil
	case celast.ListKind:
		for _, el := range e.AsList().Elements() {
			w.use(w.eval(el))
		}
	case celast.MapKind:
		for _, en := range e.AsMap().Entries() {
			if en.Kind() == celast.MapEntryKind {
				w.use(w.eval(en.AsMapEntry().Key()))
				w.use(w.eval(en.AsMapEntry().Value()))
			}
		}
	case celast.StructKind:
		for _, f := range e.AsStruct().Fields() {
			if f.Kind() == celast.StructFieldKind {
				w.use(w.eval(f.AsStructField().Value()))
			}
		}
	}
	return nil
}

// call reads indexing, a list's size and equality of strings at the same
// place precisely, anything else whole.
func (w readWalk) call(c celast.CallExpr) *valueAt {
	var operands []celast.Expr
	if c.IsMemberFunction() {
		operands = append(operands, c.Target())
	}
	operands = append(operands, c.Args()...)
	switch {
	case (c.FunctionName() == "_==_" || c.FunctionName() == "_!=_") && len(operands) == 2:
		a, b := w.eval(operands[0]), w.eval(operands[1])
		if a != nil && b != nil && a.r == b.r && plainString(a.s) {
			a.r.equal = true
			return nil
		}
		w.use(a)
		w.use(b)
		return nil
	case c.FunctionName() == "_[_]" && len(operands) == 2:
		op := w.eval(operands[0])
		w.use(w.eval(operands[1]))
		if op != nil && op.s.Type == "array" && op.s.Items != nil && !dynamic(op.s) {
			return &valueAt{r: op.r.item(), s: op.s.Items}
		}
		w.use(op)
		return nil
	case c.FunctionName() == "size" && len(operands) == 1:
		op := w.eval(operands[0])
		if op != nil && op.s.Type == "array" && !dynamic(op.s) {
			return nil // a list reached is read for its length
		}
		w.use(op)
		return nil
	}
	for _, o := range operands {
		w.use(w.eval(o))
	}
	return nil
}

// comprehension binds a macro's variable to each item of a list of self;
// over anything else, the range is read whole.
func (w readWalk) comprehension(c celast.ComprehensionExpr) {
	inner := readWalk{scope: make(map[string]*valueAt, len(w.scope)+2)}
	for k, v := range w.scope {
		inner.scope[k] = v
	}
	rng := w.eval(c.IterRange())
	inner.scope[c.IterVar()] = nil
	if c.HasIterVar2() {
		inner.scope[c.IterVar2()] = nil
	}
	if rng != nil && !c.HasIterVar2() && rng.s.Type == "array" && rng.s.Items != nil && !dynamic(rng.s) {
		inner.scope[c.IterVar()] = &valueAt{r: rng.r.item(), s: rng.s.Items}
	} else {
		w.use(rng)
	}
	w.use(w.eval(c.AccuInit()))
	inner.scope[c.AccuVar()] = nil
	inner.use(inner.eval(c.LoopCondition()))
	inner.use(inner.eval(c.LoopStep()))
	inner.use(inner.eval(c.Result()))
}

// property is the schema property a CEL field name selects (names CEL
// cannot spell are escaped, as the library does): only an object of
// declared properties is followed.
func property(s *structuralschema.Structural, celName string) (string, *structuralschema.Structural, bool) {
	if s == nil || s.Type != "object" || dynamic(s) || s.AdditionalProperties != nil {
		return "", nil, false
	}
	for name := range s.Properties {
		if escaped, ok := apiservercel.Escape(name); ok && escaped == celName {
			p := s.Properties[name]
			return name, &p, true
		}
	}
	return "", nil, false
}

// plainString is a schema whose values CEL sees as its strings (a format
// would make them durations, timestamps or bytes).
func plainString(s *structuralschema.Structural) bool {
	return s != nil && s.Type == "string" && !dynamic(s) && (s.ValueValidation == nil || s.ValueValidation.Format == "")
}

// dynamic schemas show a rule values of any shape: not followed.
func dynamic(s *structuralschema.Structural) bool {
	return s.XPreserveUnknownFields || s.XEmbeddedResource || s.XIntOrString
}

// projectedSum is the SHA-256 of what r reads of value, encoded as
// canonicalSum encodes (with fields' presence and lists' lengths), so two
// values of one sum look the same to the rules.
func projectedSum(value any, r *reads) (sum [sha256.Size]byte, ok bool) {
	bp := canonicalBuffers.Get().(*[]byte)
	var classes equalClasses
	b, ok := appendProjected((*bp)[:0], value, r, &classes)
	if ok {
		sum = sha256.Sum256(b)
	}
	if cap(b) <= maxPooledCanonical {
		*bp = b
		canonicalBuffers.Put(bp)
	}
	return sum, ok
}

// equalClasses numbers the strings met at each place read for equality,
// in the order the projection meets them: equal strings, equal numbers.
type equalClasses map[*reads]map[string]uint64

func appendProjected(b []byte, value any, r *reads, classes *equalClasses) ([]byte, bool) {
	if r == nil {
		return append(b, 'x'), true // not read
	}
	if r.whole {
		return appendCanonical(b, value)
	}
	switch v := value.(type) {
	case map[string]any:
		if v == nil || r.items != nil {
			return appendCanonical(b, value)
		}
		b = append(b, 'o')
		var small [16]string
		names := small[:0]
		for name := range r.fields {
			names = append(names, name)
		}
		slices.Sort(names)
		for _, name := range names {
			b = appendCanonicalString(b, name)
			fv, present := v[name]
			if !present {
				b = append(b, 'a')
				continue
			}
			var ok bool
			if b, ok = appendProjected(append(b, 'p'), fv, r.fields[name], classes); !ok {
				return b, false
			}
		}
		return b, true
	case []any:
		if v == nil || r.fields != nil {
			return appendCanonical(b, value)
		}
		b = appendCanonicalLen(append(b, 'l'), len(v))
		for _, e := range v {
			var ok bool
			if b, ok = appendProjected(b, e, r.items, classes); !ok {
				return b, false
			}
		}
		return b, true
	case nil:
		return append(b, 'n'), true
	}
	if r.equal && r.fields == nil && r.items == nil {
		str, isString := value.(string)
		if !isString {
			return b, false
		}
		if *classes == nil {
			*classes = equalClasses{}
		}
		seen := (*classes)[r]
		if seen == nil {
			seen = map[string]uint64{}
			(*classes)[r] = seen
		}
		class, met := seen[str]
		if !met {
			class = uint64(len(seen))
			seen[str] = class
		}
		// CEL's size of a string, its cost's measure, is its runes.
		return binary.AppendUvarint(binary.AppendUvarint(append(b, 'q'), class), uint64(utf8.RuneCountInString(str))), true
	}
	if r.fields == nil && r.items == nil {
		// A scalar reached and not used: only has() saw it, so only
		// its presence, in its parent's encoding, counts.
		return append(b, 'x'), true
	}
	return appendCanonical(b, value)
}
