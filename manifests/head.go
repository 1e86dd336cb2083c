package manifests

import (
	"encoding/json"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// objectHead is what decodeObject reads of a document before its kind's
// decode: apiVersion, kind, metadata.name and metadata.namespace.
type objectHead struct {
	apiVersion, kind, name, namespace string
}

// scanHead reads a JSON document's head from its top-level keys without
// decoding it, which encoding/json's probe of every document cost. It
// returns false whenever its answer could differ from the probe's: invalid
// JSON, a key with an escape, a byte outside ASCII or a case-folded twin
// of a head key, a head key twice, a head value that is not a plain
// string (or metadata not an object), nesting deeper than maxHeadDepth;
// decodeObject then asks the probe (TestScanHeadIsProbe).
func scanHead(doc []byte) (objectHead, bool) {
	s := headScanner{doc: doc}
	var h objectHead
	seen := 0
	ok := s.object(func(key string) bool {
		switch key {
		case "apiVersion":
			return s.headString(&h.apiVersion, &seen, 1)
		case "kind":
			return s.headString(&h.kind, &seen, 2)
		case "metadata":
			if seen&4 != 0 || !s.peek('{') {
				return false
			}
			seen |= 4
			metaSeen := 0
			return s.object(func(key string) bool {
				switch key {
				case "name":
					return s.headString(&h.name, &metaSeen, 1)
				case "namespace":
					return s.headString(&h.namespace, &metaSeen, 2)
				}
				if strings.EqualFold(key, "name") || strings.EqualFold(key, "namespace") {
					return false
				}
				return s.value(1)
			})
		}
		if strings.EqualFold(key, "apiVersion") || strings.EqualFold(key, "kind") || strings.EqualFold(key, "metadata") {
			return false
		}
		return s.value(0)
	})
	if !ok {
		return objectHead{}, false
	}
	s.space()
	return h, s.i == len(s.doc)
}

// maxHeadDepth bounds scanHead's recursion; deeper documents go to the
// probe, whose own bound is encoding/json's.
const maxHeadDepth = 64

// headScanner validates JSON as encoding/json's checkValid does, reading
// only what scanHead needs.
type headScanner struct {
	doc []byte
	i   int
}

func (s *headScanner) space() {
	for s.i < len(s.doc) {
		switch s.doc[s.i] {
		case ' ', '\t', '\n', '\r':
			s.i++
		default:
			return
		}
	}
}

// peek says whether the next value starts with c.
func (s *headScanner) peek(c byte) bool {
	s.space()
	return s.i < len(s.doc) && s.doc[s.i] == c
}

// headString reads a head key's value, a string of printable ASCII
// without escapes, once (bit of seen).
func (s *headScanner) headString(into *string, seen *int, bit int) bool {
	if *seen&bit != 0 || !s.peek('"') {
		return false
	}
	*seen |= bit
	start := s.i + 1
	for j := start; j < len(s.doc); j++ {
		switch c := s.doc[j]; {
		case c == '"':
			*into = string(s.doc[start:j])
			s.i = j + 1
			return true
		case c == '\\' || c < 0x20 || c > 0x7e:
			return false
		}
	}
	return false
}

// object reads an object, calling member with each key once the scanner
// stands before its value; member reads the value.
func (s *headScanner) object(member func(key string) bool) bool {
	if !s.peek('{') {
		return false
	}
	s.i++
	if s.peek('}') {
		s.i++
		return true
	}
	for {
		if !s.peek('"') {
			return false
		}
		start := s.i + 1
		end := start
		for ; end < len(s.doc) && s.doc[end] != '"'; end++ {
			if c := s.doc[end]; c == '\\' || c < 0x20 || c > 0x7e {
				return false
			}
		}
		if end == len(s.doc) {
			return false
		}
		s.i = end + 1
		if !s.peek(':') {
			return false
		}
		s.i++
		if !member(string(s.doc[start:end])) {
			return false
		}
		if more, ok := s.after('}'); !more {
			return ok
		}
	}
}

// after reads what follows a member or item: a comma (more) or close
// (ok, the end).
func (s *headScanner) after(close byte) (more, ok bool) {
	s.space()
	if s.i >= len(s.doc) {
		return false, false
	}
	switch s.doc[s.i] {
	case ',':
		s.i++
		return true, true
	case close:
		s.i++
		return false, true
	}
	return false, false
}

// value skips one JSON value, validating it.
func (s *headScanner) value(depth int) bool {
	if depth > maxHeadDepth {
		return false
	}
	s.space()
	if s.i >= len(s.doc) {
		return false
	}
	switch c := s.doc[s.i]; {
	case c == '{':
		return s.object(func(string) bool { return s.value(depth + 1) })
	case c == '[':
		s.i++
		if s.peek(']') {
			s.i++
			return true
		}
		for {
			if !s.value(depth + 1) {
				return false
			}
			if more, ok := s.after(']'); !more {
				return ok
			}
		}
	case c == '"':
		return s.skipString()
	case c == '-' || c >= '0' && c <= '9':
		return s.number()
	}
	for _, lit := range []string{"true", "false", "null"} {
		if strings.HasPrefix(string(s.doc[s.i:min(len(s.doc), s.i+len(lit))]), lit) {
			s.i += len(lit)
			return true
		}
	}
	return false
}

// skipString skips a string value: any byte from 0x20 (encoding/json
// does not check UTF-8), escapes as JSON defines them.
func (s *headScanner) skipString() bool {
	for j := s.i + 1; j < len(s.doc); j++ {
		switch c := s.doc[j]; {
		case c == '"':
			s.i = j + 1
			return true
		case c < 0x20:
			return false
		case c == '\\':
			j++
			if j >= len(s.doc) {
				return false
			}
			switch s.doc[j] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			case 'u':
				if j+4 >= len(s.doc) {
					return false
				}
				for _, h := range s.doc[j+1 : j+5] {
					if !isHex(h) {
						return false
					}
				}
				j += 4
			default:
				return false
			}
		}
	}
	return false
}

func isHex(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}

// number skips -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)?.
func (s *headScanner) number() bool {
	d := s.doc
	i := s.i
	if i < len(d) && d[i] == '-' {
		i++
	}
	digits := func() int {
		n := 0
		for i < len(d) && d[i] >= '0' && d[i] <= '9' {
			i++
			n++
		}
		return n
	}
	switch {
	case i < len(d) && d[i] == '0':
		i++
	case digits() == 0:
		return false
	}
	if i < len(d) && d[i] == '.' {
		i++
		if digits() == 0 {
			return false
		}
	}
	if i < len(d) && (d[i] == 'e' || d[i] == 'E') {
		i++
		if i < len(d) && (d[i] == '+' || d[i] == '-') {
			i++
		}
		if digits() == 0 {
			return false
		}
	}
	s.i = i
	return true
}

// probeHead is the head as encoding/json decodes it, errors included: what
// scanHead stands for.
func probeHead(doc []byte) (objectHead, error) {
	var probe struct {
		metav1.TypeMeta
		Metadata struct {
			Name      string `json:"name"`
			Namespace string `json:"namespace"`
		} `json:"metadata"`
	}
	err := json.Unmarshal(doc, &probe)
	return objectHead{probe.APIVersion, probe.Kind, probe.Metadata.Name, probe.Metadata.Namespace}, err
}
