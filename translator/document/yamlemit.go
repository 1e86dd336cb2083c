package document

import (
	"encoding/json"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"
)

// yamlEmitter writes, for the values decodeJSON makes (maps of strings,
// lists, strings, json.Number, bool, nil), the bytes yaml.v2's Marshal
// writes for them: the same choice of scalar style, the same line folding
// at column 80, the same indentation. It is that emitter's state machine
// reduced to block collections, flow only for empty ones, and strings of
// printable ASCII and newlines; anything else makes emit return false and
// the caller uses yaml.v2 itself. TestYAMLEmitterMatchesYAMLv2 holds it to
// yaml.v2's output.
type yamlEmitter struct {
	out     []byte
	column  int
	indent  int
	indents []int
	// whitespace: the last byte written was whitespace or an indicator
	// that needs none after it; indention: only indentation written on
	// this line so far. Both as yaml.v2 keeps them.
	whitespace, indention bool
}

// The emitter's settings yaml.v2 uses.
const (
	yamlBestIndent   = 2
	yamlBestWidth    = 80
	yamlMaxSimpleKey = 128
)

// node contexts, as yaml.v2 passes them to each node.
type yamlContext struct{ mapping, simpleKey bool }

func newYAMLEmitter(buf []byte) *yamlEmitter {
	return &yamlEmitter{out: buf, indent: -1, whitespace: true, indention: true}
}

// document writes v as yaml.v2 writes a whole document, or reports false
// for a value it does not handle.
func (e *yamlEmitter) document(v any) bool {
	if !e.node(v, yamlContext{}) {
		return false
	}
	e.writeIndent() // the document's end
	return true
}

func (e *yamlEmitter) put(c byte) {
	e.out = append(e.out, c)
	e.column++
}

func (e *yamlEmitter) putBreak() {
	e.out = append(e.out, '\n')
	e.column = 0
}

func (e *yamlEmitter) pushIndent(flow, indentless bool) {
	e.indents = append(e.indents, e.indent)
	switch {
	case e.indent < 0 && flow:
		e.indent = yamlBestIndent
	case e.indent < 0:
		e.indent = 0
	case !indentless:
		e.indent += yamlBestIndent
	}
}

func (e *yamlEmitter) popIndent() {
	e.indent = e.indents[len(e.indents)-1]
	e.indents = e.indents[:len(e.indents)-1]
}

func (e *yamlEmitter) writeIndent() {
	indent := max(e.indent, 0)
	if !e.indention || e.column > indent || (e.column == indent && !e.whitespace) {
		e.putBreak()
	}
	for e.column < indent {
		e.put(' ')
	}
	e.whitespace, e.indention = true, true
}

func (e *yamlEmitter) indicator(s string, needWhitespace, isWhitespace, isIndention bool) {
	if needWhitespace && !e.whitespace {
		e.put(' ')
	}
	e.out = append(e.out, s...)
	e.column += len(s)
	e.whitespace = isWhitespace
	e.indention = e.indention && isIndention
}

func (e *yamlEmitter) node(v any, ctx yamlContext) bool {
	switch v := v.(type) {
	case map[string]any:
		if len(v) == 0 {
			e.empty("{", "}")
			return true
		}
		return e.mapping(v)
	case []any:
		if len(v) == 0 {
			e.empty("[", "]")
			return true
		}
		return e.sequence(v, ctx)
	case string:
		return e.stringScalar(v, ctx)
	case json.Number:
		return e.number(string(v), ctx)
	case protoNode:
		return e.protoMessage(v.m.ProtoReflect(), ctx)
	case jsonText:
		return e.jsonValueText(v, ctx)
	case bool:
		return e.scalar(strconv.FormatBool(v), yamlPlain, ctx)
	case nil:
		return e.scalar("null", yamlPlain, ctx)
	}
	return false
}

// number writes a JSON number's text as yaml.v2 writes the json.Number:
// the int64 or float64 its YAML parser would have read.
func (e *yamlEmitter) number(n string, ctx yamlContext) bool {
	if i, err := strconv.ParseInt(n, 10, 64); err == nil {
		return e.scalar(strconv.FormatInt(i, 10), yamlPlain, ctx)
	}
	if f, err := strconv.ParseFloat(n, 64); err == nil {
		return e.scalar(strconv.FormatFloat(f, 'g', -1, 64), yamlPlain, ctx)
	}
	return e.stringScalar(n, ctx)
}

// empty writes an empty collection, in flow style.
func (e *yamlEmitter) empty(open, close string) {
	e.indicator(open, true, true, false)
	e.pushIndent(true, false)
	e.popIndent()
	e.indicator(close, false, false, false)
}

func (e *yamlEmitter) sequence(items []any, ctx yamlContext) bool {
	e.pushIndent(false, ctx.mapping && !e.indention)
	for _, item := range items {
		e.writeIndent()
		e.indicator("-", true, false, true)
		if !e.node(item, yamlContext{}) {
			return false
		}
	}
	e.popIndent()
	return true
}

func (e *yamlEmitter) mapping(m map[string]any) bool {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sortYAMLKeys(keys)
	if !yamlKeysOrdered(keys) {
		return false
	}
	e.pushIndent(false, false)
	for _, k := range keys {
		if !e.mappingKey(k) {
			return false
		}
		if !e.node(m[k], yamlContext{mapping: true}) {
			return false
		}
	}
	e.popIndent()
	return true
}

type yamlStyle int

const (
	yamlPlain yamlStyle = iota
	yamlSingleQuoted
	yamlDoubleQuoted
	yamlLiteral
)

// stringScalar picks a string's style as yaml.v2's encoder does: literal
// with a newline, plain unless it would read back as another type.
func (e *yamlEmitter) stringScalar(s string, ctx yamlContext) bool {
	switch {
	case strings.IndexByte(s, '\n') >= 0:
		return e.scalar(s, yamlLiteral, ctx)
	case yamlReadsAsString(s):
		return e.scalar(s, yamlPlain, ctx)
	}
	return e.scalar(s, yamlDoubleQuoted, ctx)
}

// scalar writes s in the style yaml.v2's emitter settles on for the one
// asked: the first of plain, single-quoted and double-quoted its content
// allows.
func (e *yamlEmitter) scalar(s string, style yamlStyle, ctx yamlContext) bool {
	a, ok := analyzeYAMLScalar(s)
	if !ok {
		return false
	}
	if ctx.simpleKey && a.multiline {
		style = yamlDoubleQuoted
	}
	if style == yamlPlain && (!a.blockPlainAllowed || s == "" && ctx.simpleKey) {
		style = yamlSingleQuoted
	}
	if style == yamlSingleQuoted && !a.singleQuotedAllowed {
		style = yamlDoubleQuoted
	}
	if style == yamlLiteral && (!a.blockAllowed || ctx.simpleKey) {
		style = yamlDoubleQuoted
	}
	// A block kept with `|+` leaves the document open: yaml.v2 may end it
	// with `...`, which is left to yaml.v2.
	if style == yamlLiteral && (len(s) == 1 || s[len(s)-2] == '\n') && s[len(s)-1] == '\n' {
		return false
	}
	e.pushIndent(true, false)
	breaks := !ctx.simpleKey
	switch style {
	case yamlPlain:
		e.plain(s, breaks)
	case yamlSingleQuoted:
		e.singleQuoted(s, breaks)
	case yamlDoubleQuoted:
		e.doubleQuoted(s, breaks)
	case yamlLiteral:
		e.literal(s)
	}
	e.popIndent()
	return true
}

// yamlScalarAnalysis is what yaml.v2's emitter learns of a scalar's
// content to choose its style.
type yamlScalarAnalysis struct {
	multiline, blockPlainAllowed, singleQuotedAllowed, blockAllowed bool
}

// analyzeYAMLScalar analyses s, which must be printable ASCII and
// newlines (else false): yaml.v2 escapes or tags the rest.
func analyzeYAMLScalar(s string) (yamlScalarAnalysis, bool) {
	if s == "" {
		return yamlScalarAnalysis{blockPlainAllowed: true, singleQuotedAllowed: true}, true
	}
	var blockIndicators, lineBreaks, leadingSpace, leadingBreak, trailingSpace, trailingBreak, breakSpace, spaceBreak bool
	if strings.HasPrefix(s, "---") || strings.HasPrefix(s, "...") {
		blockIndicators = true
	}
	precededByWhitespace := true
	previousSpace, previousBreak := false, false
	for i := 0; i < len(s); i++ {
		c := s[i]
		if (c < 0x20 || c > 0x7e) && c != '\n' {
			return yamlScalarAnalysis{}, false
		}
		followedByWhitespace := i+1 >= len(s) || s[i+1] == ' '
		if i == 0 {
			switch c {
			case '#', ',', '[', ']', '{', '}', '&', '*', '!', '|', '>', '\'', '"', '%', '@', '`':
				blockIndicators = true
			case '?', ':', '-':
				if followedByWhitespace {
					blockIndicators = true
				}
			}
		} else {
			switch c {
			case ':':
				if followedByWhitespace {
					blockIndicators = true
				}
			case '#':
				if precededByWhitespace {
					blockIndicators = true
				}
			}
		}
		switch c {
		case ' ':
			leadingSpace = leadingSpace || i == 0
			trailingSpace = trailingSpace || i == len(s)-1
			breakSpace = breakSpace || previousBreak
			previousSpace, previousBreak = true, false
		case '\n':
			lineBreaks = true
			leadingBreak = leadingBreak || i == 0
			trailingBreak = trailingBreak || i == len(s)-1
			spaceBreak = spaceBreak || previousSpace
			previousSpace, previousBreak = false, true
		default:
			previousSpace, previousBreak = false, false
		}
		precededByWhitespace = c == ' ' || c == '\n'
	}
	a := yamlScalarAnalysis{multiline: lineBreaks, blockPlainAllowed: true, singleQuotedAllowed: true, blockAllowed: true}
	if leadingSpace || leadingBreak || trailingSpace || trailingBreak || lineBreaks || blockIndicators {
		a.blockPlainAllowed = false
	}
	if trailingSpace {
		a.blockAllowed = false
	}
	if breakSpace {
		a.blockPlainAllowed, a.singleQuotedAllowed = false, false
	}
	if spaceBreak {
		a.blockPlainAllowed, a.singleQuotedAllowed, a.blockAllowed = false, false, false
	}
	return a, true
}

// plain writes s unquoted, folding at a single space past the width.
func (e *yamlEmitter) plain(s string, allowBreaks bool) {
	if !e.whitespace {
		e.put(' ')
	}
	e.folded(s, allowBreaks, false)
	e.whitespace, e.indention = false, false
}

// singleQuoted writes s between single quotes, quotes doubled, folding
// as plain does but never at its first or last byte.
func (e *yamlEmitter) singleQuoted(s string, allowBreaks bool) {
	e.indicator("'", true, false, false)
	e.folded(s, allowBreaks, true)
	e.indicator("'", false, false, false)
	e.whitespace, e.indention = false, false
}

// folded writes the text of a plain or single-quoted scalar, a single
// space past the width becoming a line break.
func (e *yamlEmitter) folded(s string, allowBreaks, quoted bool) {
	spaces, breaks := false, false
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == ' ':
			if allowBreaks && !spaces && e.column > yamlBestWidth && (!quoted || i > 0 && i < len(s)-1) && (i+1 >= len(s) || s[i+1] != ' ') {
				e.writeIndent()
			} else {
				e.put(c)
			}
			spaces = true
		case c == '\n':
			if !breaks {
				e.putBreak()
			}
			e.putBreak()
			e.indention, breaks = true, true
		default:
			if breaks {
				e.writeIndent()
			}
			if quoted && c == '\'' {
				e.put('\'')
			}
			e.put(c)
			e.indention, spaces, breaks = false, false, false
		}
	}
}

// doubleQuoted writes s between double quotes, escaping newlines, quotes
// and backslashes, folding at a space past the width (a second space
// escaped).
func (e *yamlEmitter) doubleQuoted(s string, allowBreaks bool) {
	e.indicator(`"`, true, false, false)
	spaces := false
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case '\n', '"', '\\':
			e.put('\\')
			e.put(map[byte]byte{'\n': 'n', '"': '"', '\\': '\\'}[c])
			spaces = false
		case ' ':
			if allowBreaks && !spaces && e.column > yamlBestWidth && i > 0 && i < len(s)-1 {
				e.writeIndent()
				if s[i+1] == ' ' {
					e.put('\\')
				}
			} else {
				e.put(c)
			}
			spaces = true
		default:
			e.put(c)
			spaces = false
		}
	}
	e.indicator(`"`, false, false, false)
	e.whitespace, e.indention = false, false
}

// literal writes s as a `|` block, with the indentation and chomping
// indicators its first and last bytes need (never `+`: see scalar).
func (e *yamlEmitter) literal(s string) {
	e.indicator("|", true, false, false)
	if s[0] == ' ' || s[0] == '\n' {
		e.indicator(strconv.Itoa(yamlBestIndent), false, false, false)
	}
	if s[len(s)-1] != '\n' {
		e.indicator("-", false, false, false)
	}
	e.putBreak()
	e.indention, e.whitespace = true, true
	breaks := true
	for i := 0; i < len(s); i++ {
		if c := s[i]; c == '\n' {
			e.putBreak()
			e.indention, breaks = true, true
		} else {
			if breaks {
				e.writeIndent()
			}
			e.put(c)
			e.indention, breaks = false, false
		}
	}
}

// sortYAMLKeys sorts a mapping's keys as yaml.v2 does.
func sortYAMLKeys(keys []string) { slices.SortFunc(keys, yamlKeyCompare) }

// yamlKeyCompare orders string keys as yaml.v2 sorts a map's: letters
// before other runes, runs of digits by their value.
func yamlKeyCompare(a, b string) int {
	if yamlKeyLess(a, b) {
		return -1
	}
	if yamlKeyLess(b, a) {
		return 1
	}
	return 0
}

// yamlKeysOrdered reports whether yaml.v2's order of keys, sorted, holds
// between every two of them. Runs of digits can make it cyclic ("01",
// "0x1F", "1_000"): yaml.v2's order then depends on the map's iteration
// order, and such maps are left to it. Keys without a digit compare
// letters and other runes only, which is transitive.
func yamlKeysOrdered(keys []string) bool {
	digits := false
	for _, k := range keys {
		digits = digits || strings.ContainsAny(k, "0123456789")
	}
	if !digits {
		return true
	}
	for i := range keys {
		for j := i + 1; j < len(keys); j++ {
			if !yamlKeyLess(keys[i], keys[j]) || yamlKeyLess(keys[j], keys[i]) {
				return false
			}
		}
	}
	return true
}

func yamlKeyLess(a, b string) bool {
	ar, br := []rune(a), []rune(b)
	for i := 0; i < len(ar) && i < len(br); i++ {
		if ar[i] == br[i] {
			continue
		}
		al, bl := unicode.IsLetter(ar[i]), unicode.IsLetter(br[i])
		if al && bl {
			return ar[i] < br[i]
		}
		if al || bl {
			return bl
		}
		var an, bn int64
		if ar[i] == '0' || br[i] == '0' {
			for j := i - 1; j >= 0 && unicode.IsDigit(ar[j]); j-- {
				if ar[j] != '0' {
					an, bn = 1, 1
					break
				}
			}
		}
		ai, bi := i, i
		for ; ai < len(ar) && unicode.IsDigit(ar[ai]); ai++ {
			an = an*10 + int64(ar[ai]-'0')
		}
		for ; bi < len(br) && unicode.IsDigit(br[bi]); bi++ {
			bn = bn*10 + int64(br[bi]-'0')
		}
		if an != bn {
			return an < bn
		}
		if ai != bi {
			return ai < bi
		}
		return ar[i] < br[i]
	}
	return len(ar) < len(br)
}

// yamlReadsAsString reports whether yaml.v2 would read s, unquoted, back
// as a string (and does not take it for a base 60 float): else its
// encoder quotes it.
func yamlReadsAsString(s string) bool {
	if s == "" {
		return false
	}
	switch s {
	case "y", "Y", "yes", "Yes", "YES", "true", "True", "TRUE", "on", "On", "ON",
		"n", "N", "no", "No", "NO", "false", "False", "FALSE", "off", "Off", "OFF",
		"~", "null", "Null", "NULL", ".nan", ".NaN", ".NAN", ".inf", ".Inf", ".INF",
		"+.inf", "+.Inf", "+.INF", "-.inf", "-.Inf", "-.INF":
		return false
	}
	switch c := s[0]; {
	case c == '.':
		_, err := strconv.ParseFloat(s, 64)
		return err != nil
	case c == '+' || c == '-' || c >= '0' && c <= '9':
		return !yamlNumberOrTime(s) && !(strings.IndexByte(s, ':') >= 0 && yamlBase60Float.MatchString(s))
	}
	return true
}

var (
	yamlFloat       = regexp.MustCompile(`^[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?$`)
	yamlBase60Float = regexp.MustCompile(`^[-+]?[0-9][0-9_]*(?::[0-5]?[0-9])+(?:\.[0-9_]*)?$`)
	// yamlTimestamps are the formats yaml.v2 reads a timestamp in.
	yamlTimestamps = []string{"2006-1-2T15:4:5.999999999Z07:00", "2006-1-2t15:4:5.999999999Z07:00", "2006-1-2 15:4:5.999999999", "2006-1-2"}
)

// yamlNumberOrTime reports whether yaml.v2 reads s, which starts with a
// sign or a digit, as a timestamp, an integer or a float.
func yamlNumberOrTime(s string) bool {
	if len(s) > 4 && s[4] == '-' && strings.IndexFunc(s[:4], func(r rune) bool { return r < '0' || r > '9' }) < 0 {
		for _, f := range yamlTimestamps {
			if _, err := time.Parse(f, s); err == nil {
				return true
			}
		}
	}
	plain := strings.ReplaceAll(s, "_", "")
	if _, err := strconv.ParseInt(plain, 0, 64); err == nil {
		return true
	}
	if _, err := strconv.ParseUint(plain, 0, 64); err == nil {
		return true
	}
	if yamlFloat.MatchString(plain) {
		if _, err := strconv.ParseFloat(plain, 64); err == nil {
			return true
		}
	}
	if rest, ok := strings.CutPrefix(plain, "0b"); ok {
		if _, err := strconv.ParseInt(rest, 2, 64); err == nil {
			return true
		}
		if _, err := strconv.ParseUint(rest, 2, 64); err == nil {
			return true
		}
	} else if rest, ok := strings.CutPrefix(plain, "-0b"); ok {
		if _, err := strconv.ParseInt("-"+rest, 2, 64); err == nil {
			return true
		}
	}
	return false
}

// mappingKey writes a block mapping's key and its colon; false for a key
// that is not simple (yaml.v2 writes it `? key`), left to yaml.v2.
func (e *yamlEmitter) mappingKey(k string) bool {
	e.writeIndent()
	if len(k) > yamlMaxSimpleKey || strings.IndexByte(k, '\n') >= 0 {
		return false
	}
	if !e.stringScalar(k, yamlContext{mapping: true, simpleKey: true}) {
		return false
	}
	e.indicator(":", false, false, false)
	return true
}
