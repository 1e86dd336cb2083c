package tlsopts

import (
	"slices"
	"strconv"
)

// Memo remembers Parse's results by the options' content:
// policies of one fleet mostly share a few option sets, and parsing is a
// pure function of the set and the insecure opt-in. Only the sets a call
// used are kept for the next.
type Memo struct {
	last, next map[string]parsedOptions
}

type parsedOptions struct {
	opts Options // shared read-only by the verdicts that parsed equal sets
	err  error
}

// ParseWith is Parse through the memo m, which may be nil. (A function, not
// a method: methods take no type parameters.)
func ParseWith[K, V ~string](m *Memo, options map[K]V, allowInsecure bool) (Options, error) {
	if m == nil || len(options) > maxOptions {
		return Parse(options, allowInsecure)
	}
	key := optionsKey(options, allowInsecure)
	if p, ok := m.next[key]; ok {
		return p.opts, p.err
	}
	p, ok := m.last[key]
	if !ok {
		p.opts, p.err = Parse(options, allowInsecure)
	}
	if m.next == nil {
		m.next = map[string]parsedOptions{}
	}
	m.next[key] = p
	return p.opts, p.err
}

// Done ends a call: what it used is what the next one may reuse.
func (m *Memo) Done() {
	if m == nil {
		return
	}
	m.last, m.next = m.next, nil
}

// optionsKey is the options' content, exactly: sorted key, value pairs,
// each length-prefixed, then the insecure opt-in.
func optionsKey[K, V ~string](options map[K]V, allowInsecure bool) string {
	keys := make([]K, 0, len(options))
	size := 1
	for k, v := range options {
		keys = append(keys, k)
		size += len(k) + len(v) + 12
	}
	slices.Sort(keys)
	b := make([]byte, 0, size)
	for _, k := range keys {
		v := options[k]
		b = strconv.AppendInt(b, int64(len(k)), 10)
		b = append(b, ':')
		b = append(b, k...)
		b = strconv.AppendInt(b, int64(len(v)), 10)
		b = append(b, ':')
		b = append(b, v...)
	}
	if allowInsecure {
		b = append(b, '1')
	} else {
		b = append(b, '0')
	}
	return string(b)
}
