package document

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"runtime"
	"sort"
	"sync"

	yamlv2 "go.yaml.in/yaml/v2"
)

// encodeYAMLLists writes what sigs.k8s.io/yaml's JSONToYAML makes of the
// whole doc, one list element at a time, converted on every core and
// written in order. Each element is emitted inside a one-element list under
// its own key, so at the column (and so with the line folding) it has in
// the whole document; the key line is then dropped. Top-level keys are
// lowercase letters, which yaml.v2 sorts as sort.Strings does.
func encodeYAMLLists(w io.Writer, doc map[string][]any) error {
	keys := make([]string, 0, len(doc))
	for k := range doc {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		list := doc[k]
		if len(list) == 0 {
			y, err := elementYAML(k, nil, false)
			if err != nil {
				return err
			}
			if _, err := w.Write(y); err != nil {
				return err
			}
			continue
		}
		if _, err := io.WriteString(w, k+":\n"); err != nil {
			return err
		}
		if err := writeElements(w, k, list); err != nil {
			return err
		}
	}
	return nil
}

// writeElements converts list's elements on GOMAXPROCS workers and writes
// them in order; at most a window of them is held converted.
func writeElements(w io.Writer, key string, list []any) error {
	type result struct {
		y   []byte
		buf *[]byte // y's buffer, back to elementBuffers once written
		err error
	}
	workers := runtime.GOMAXPROCS(0)
	window := 4 * workers
	slots := make([]chan result, len(list))
	for i := range slots {
		slots[i] = make(chan result, 1)
	}
	// A token per dispatched, unwritten element: dispatch is in order, so
	// the element the writer waits for is always dispatched.
	tokens := make(chan struct{}, window)
	next := make(chan int)
	done := make(chan struct{})
	defer close(done)
	go func() {
		defer close(next)
		for i := range list {
			select {
			case tokens <- struct{}{}:
			case <-done:
				return
			}
			select {
			case next <- i:
			case <-done:
				return
			}
		}
	}()
	for range workers {
		go func() {
			for i := range next {
				v, err := list[i], error(nil)
				if d, ok := v.(deferred); ok {
					if v, err = d(); err != nil {
						slots[i] <- result{nil, nil, err}
						continue
					}
				}
				buf := elementBuffers.Get().(*[]byte)
				out, head, ok := emitElement((*buf)[:0], key, v)
				*buf = out[:0]
				if ok {
					slots[i] <- result{out[head:], buf, nil}
					continue
				}
				elementBuffers.Put(buf)
				// What the emitter declines goes the way it always went:
				// ProtoValue's values, then yaml.v2 where still declined.
				if v, err = plainValue(v); err != nil {
					slots[i] <- result{nil, nil, err}
					continue
				}
				y, err := elementYAML(key, v, true)
				if err != nil {
					err = fmt.Errorf("%s[%d]: %w", key, i, err)
				}
				slots[i] <- result{y, nil, err}
			}
		}()
	}
	for i := range list {
		r := <-slots[i]
		<-tokens
		if r.err != nil {
			return r.err
		}
		if _, err := w.Write(r.y); err != nil {
			return err
		}
		if r.buf != nil && cap(*r.buf) <= maxPooledElement {
			elementBuffers.Put(r.buf)
		}
	}
	return nil
}

// elementBuffers are the emitter's output buffers, reused from element to
// element: most elements are a few KB, and allocating each was a share of
// the garbage.
var elementBuffers = sync.Pool{New: func() any { b := make([]byte, 0, 4096); return &b }}

// maxPooledElement bounds what a pooled buffer keeps: a route
// configuration of 10,000 virtual hosts is megabytes.
const maxPooledElement = 1 << 20

// elementYAML is JSONToYAML of {key: [v]} without its first line (or of
// {key: []} when !one). The value goes through JSON (decoded with
// UseNumber) as JSONToYAML's input does, then straight to yaml.v2's
// encoder: yaml.v2 writes a json.Number as the int64 or float64 its YAML
// parser would have read, and parsing the JSON as YAML was most of the cost.
func elementYAML(key string, v any, one bool) ([]byte, error) {
	if one {
		if y, ok := emittedElement(nil, key, v); ok {
			return y, nil
		}
	}
	list := []any{}
	if one {
		var buf bytes.Buffer
		if err := encodeJSON(&buf, v); err != nil {
			return nil, err
		}
		dec := json.NewDecoder(&buf)
		dec.UseNumber()
		var plain any
		if err := dec.Decode(&plain); err != nil {
			return nil, err
		}
		list = append(list, plain)
	}
	y, err := yamlv2.Marshal(map[string]any{key: list})
	if err != nil || !one {
		return y, err
	}
	head := key + ":\n"
	if !bytes.HasPrefix(y, []byte(head)) {
		return nil, fmt.Errorf("YAML does not start with %q", head)
	}
	return y[len(head):], nil
}

// emittedElement is elementYAML(key, v, true) written by yamlEmitter, when
// it handles every value in v: most documents' elements, at a small part
// of yaml.v2's cost.
func emittedElement(buf []byte, key string, v any) ([]byte, bool) {
	out, head, ok := emitElement(buf, key, v)
	return out[head:], ok
}

// emitElement is emittedElement appending to buf: the element is
// out[head:].
func emitElement(buf []byte, key string, v any) (out []byte, head int, ok bool) {
	e := newYAMLEmitter(buf)
	if !e.document(map[string]any{key: []any{v}}) {
		return e.out, 0, false
	}
	head = len(key) + len(":\n")
	if len(e.out) < head || string(e.out[:head]) != key+":\n" {
		return e.out, 0, false
	}
	return e.out, head, true
}
