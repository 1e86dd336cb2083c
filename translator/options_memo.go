package translator

import (
	"slices"
	"strconv"

	gwv1 "sigs.k8s.io/gateway-api/apis/v1"
)

// optionsMemo remembers ParseOptions' results by the options' content:
// policies of one fleet mostly share a few option sets, and parsing is a
// pure function of the set and the insecure opt-in. Only the sets a call
// used are kept for the next.
type optionsMemo struct {
	last, next map[string]parsedOptions
}

type parsedOptions struct {
	opts TLSOptions // shared read-only by the verdicts that parsed equal sets
	err  error
}

// parse is ParseOptions through the memo; m may be nil.
func (m *optionsMemo) parse(options map[gwv1.AnnotationKey]gwv1.AnnotationValue, allowInsecure bool) (TLSOptions, error) {
	if m == nil || len(options) > maxOptions {
		return ParseOptions(options, allowInsecure)
	}
	key := optionsKey(options, allowInsecure)
	if p, ok := m.next[key]; ok {
		return p.opts, p.err
	}
	p, ok := m.last[key]
	if !ok {
		p.opts, p.err = ParseOptions(options, allowInsecure)
	}
	if m.next == nil {
		m.next = map[string]parsedOptions{}
	}
	m.next[key] = p
	return p.opts, p.err
}

// done ends a call: what it used is what the next one may reuse.
func (m *optionsMemo) done() {
	if m == nil {
		return
	}
	m.last, m.next = m.next, nil
}

// optionsKey is the options' content, exactly: sorted key, value pairs,
// each length-prefixed, then the insecure opt-in.
func optionsKey(options map[gwv1.AnnotationKey]gwv1.AnnotationValue, allowInsecure bool) string {
	keys := make([]gwv1.AnnotationKey, 0, len(options))
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
