package manifests

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	kjson "sigs.k8s.io/json"
	"sigs.k8s.io/yaml"

	"github.com/tlsplane/tlsplane/crds"
	"github.com/tlsplane/tlsplane/translator"
	"github.com/tlsplane/tlsplane/translator/input"
)

// DefaultNamespace is where an object without a namespace goes, as kubectl
// would create it.
const DefaultNamespace = "default"

// maxListDepth bounds `kind: List` nesting.
const maxListDepth = 4

// Parse reads one file's bytes (path is only for messages) into objects;
// documents are numbered from 1, not counting empty ones.
// warn, which may be nil, receives one message per skipped object. An error
// names the file and the document: YAML that does not parse, or a document
// that is not a Kubernetes object. Messages quote input values only up to
// MaxExcerptBytes. A file of many documents is converted on every core;
// its warnings and its first error are the same as one at a time.
//
// Objects the API server would refuse are refused one by one, as
// `kubectl apply -f FILE` creates the others: when they are all that is
// wrong, the error is a *RefusedError naming each of them and the Inputs
// hold the file's other objects. Any other error comes with no objects.
func (l Limits) Parse(path string, data []byte, warn func(string)) (translator.Inputs, error) {
	return l.parse(path, data, warn, false)
}

// ParseSkippingForeign is Parse for a file found in a directory, where
// manifests sit beside other YAML (an Envoy bootstrap): a document that
// parses as YAML but is not a Kubernetes object (a mapping with a string
// apiVersion and kind) is skipped, with a warning, the others keeping
// their numbers. The warnings of skipped documents come first. A file
// refused as a whole (a document the YAML reader cannot split, or aliases
// over AliasBytes) is read as Parse reads it, skipping nothing, so the
// first document that is not an object is the error.
func (l Limits) ParseSkippingForeign(path string, data []byte, warn func(string)) (translator.Inputs, error) {
	return l.parse(path, data, warn, true)
}

func (l Limits) parse(path string, data []byte, warn func(string), skipForeign bool) (translator.Inputs, error) {
	l = l.orDefaults()
	if warn == nil {
		warn = func(string) {}
	}
	if int64(len(data)) > l.FileBytes {
		return translator.Inputs{}, l.fileTooLarge(path, int64(len(data)))
	}
	// Split, and bound the aliases, one document at a time and before
	// any is decoded: decoding expands them.
	r := reader{file: path}
	if l.CRDChannel != NoCRDs {
		var err error
		if r.crds, err = crds.Load(l.CRDChannel); err != nil {
			return translator.Inputs{}, fmt.Errorf("%s: %w", path, err)
		}
	}
	raws, stop := l.split(path, data)
	docs := convertDocuments(r, raws)
	var in translator.Inputs
	// A file refused as a whole skips nothing (see ParseSkippingForeign).
	skip := skipForeign && stop == nil
	if skipForeign {
		for i, d := range docs {
			if d.foreign != "" {
				warn(fmt.Sprintf("%s: document %d: skipped: not a Kubernetes object (%s)", path, i+1, d.foreign))
			}
		}
	}
	// Every refused object of the file is reported, not only the first.
	refused := &RefusedError{}
	var refusedDocs []int
	for i, d := range docs {
		if d.yamlErr != nil {
			return translator.Inputs{}, d.yamlErr
		}
		if skip && d.foreign != "" {
			continue
		}
		for _, w := range d.warnings {
			warn(w)
		}
		var re *RefusedError
		if errors.As(d.err, &re) {
			refused.Refusals = append(refused.Refusals, re.Refusals...)
			refusedDocs = append(refusedDocs, i)
		} else if d.err != nil {
			return translator.Inputs{}, d.err
		}
		// A List's admitted items stand beside its refused ones.
		for _, o := range d.objects {
			in.Add(o)
		}
	}
	if stop != nil {
		return translator.Inputs{}, stop
	}
	if len(refused.Refusals) > 0 {
		l.placeRefusals(path, data, docs, refusedDocs, refused)
		return in, refused
	}
	return in, nil
}

// placeRefusals sets each refusal's Line, the line in the file of its
// field: the document's lines are looked up only for a file refused.
func (l Limits) placeRefusals(path string, data []byte, docs []document, refusedDocs []int, refused *RefusedError) {
	data = withFinalNewline(data)
	raws, _ := l.split(path, data)
	starts := documentLines(data, raws)
	next := 0
	for _, i := range refusedDocs {
		if i >= len(raws) {
			break
		}
		var re *RefusedError
		if !errors.As(docs[i].err, &re) {
			continue
		}
		root := documentRoot(raws[i])
		for range re.Refusals {
			r := &refused.Refusals[next]
			if line := lineOf(root, r.steps); line > 0 {
				r.Line = starts[i] + line - 1
			}
			next++
		}
	}
}

// withFinalNewline is data ending in a newline, as split reads it.
func withFinalNewline(data []byte) []byte {
	if len(data) > 0 && data[len(data)-1] != '\n' {
		return append(data[:len(data):len(data)], '\n')
	}
	return data
}

// split is data's documents, up to the first that cannot be split or
// whose aliases take the file over AliasBytes; stop says why it stopped
// there.
func (l Limits) split(path string, data []byte) (raws [][]byte, stop error) {
	budget := expansionBudget{limit: l.AliasBytes, left: l.AliasBytes}
	// The YAML line reader drops a last line that exactly fills its 4 KiB
	// buffer when no newline ends it: a file cut at that size would lose its
	// objects silently.
	data = withFinalNewline(data)
	if fast, ok := splitDocuments(data); ok {
		for doc, raw := range fast {
			if err := budget.spend(path, doc+1, raw); err != nil {
				return raws, err
			}
			raws = append(raws, raw)
		}
		return raws, nil
	}
	reader := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(data)))
	for doc := 1; ; doc++ {
		raw, err := reader.Read()
		if errors.Is(err, io.EOF) {
			return raws, nil
		}
		if err != nil {
			return raws, fmt.Errorf("%s: document %d: %s", path, doc, excerptError(err))
		}
		if err := budget.spend(path, doc, raw); err != nil {
			return raws, err
		}
		raws = append(raws, raw)
	}
}

// document is one document of a file, converted: its objects and
// warnings, or its error; yamlErr when it is not YAML; foreign says why
// it is not a Kubernetes object.
type document struct {
	objects      []metav1.Object
	warnings     []string
	err, yamlErr error
	foreign      string
}

// docsPerWorker is the fewest documents worth another goroutine.
const docsPerWorker = 64

// convertDocuments converts each raw document, on up to GOMAXPROCS
// goroutines for a file of many, dropping each once converted.
func convertDocuments(r reader, raws [][]byte) []document {
	docs := make([]document, len(raws))
	workers := min(runtime.GOMAXPROCS(0), len(raws)/docsPerWorker)
	if workers <= 1 {
		var scratch translator.Inputs
		for i := range raws {
			docs[i], raws[i] = convertDocument(r, i+1, raws[i], &scratch), nil
		}
		return docs
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			var scratch translator.Inputs
			for i := int(next.Add(1) - 1); i < len(raws); i = int(next.Add(1) - 1) {
				docs[i], raws[i] = convertDocument(r, i+1, raws[i], &scratch), nil
			}
		})
	}
	wg.Wait()
	return docs
}

// reader is what converting a file's documents needs: the file's name,
// for messages, and the CRDs Gateway API objects are admitted against
// (nil: none, NoCRDs).
type reader struct {
	file string
	crds *crds.Validator
}

// validatorFor is the CRDs an object of apiVersion is admitted against:
// the kinds of gateway.networking.x-k8s.io, which only the experimental
// channel defines (a cluster on the standard channel installs their CRDs
// from it), against its CRDs, built only when such an object comes.
func (r reader) validatorFor(apiVersion string) (*crds.Validator, error) {
	if strings.HasPrefix(apiVersion, experimentalOnlyGroup) {
		return crds.Load(crds.Experimental)
	}
	return r.crds, nil
}

// convertDocument converts one document; scratch is its caller's, reused
// from document to document for what decodeObject fills in.
func convertDocument(r reader, doc int, raw []byte, scratch *translator.Inputs) document {
	path := r.file
	where := fmt.Sprintf("%s: document %d", path, doc)
	var d document
	*scratch = translator.Inputs{}
	in := scratch
	warn := func(w string) { d.warnings = append(d.warnings, w) }
	p, root, ok := parseBlockYAML(raw)
	if ok {
		defer p.release()
	}
	// A Gateway API object is admitted from the parsed YAML, when its
	// JSON is surely within the API server's bound (an escape is at most
	// six bytes).
	var head objectHead
	fromTree := false
	if ok && r.crds != nil && len(raw) <= maxRequestBodyBytes/8 {
		head, fromTree = root.head()
		fromTree = fromTree && isGatewayAPI(head.apiVersion)
	}
	if fromTree {
		d.err = r.decodeHeaded(where, nil, head, nil, root.value().(map[string]any), in, warn)
	} else {
		var jsonDoc []byte
		if ok {
			jsonDoc = root.appendJSON(make([]byte, 0, len(raw)+len(raw)/4))
		} else {
			var err error
			if jsonDoc, err = yaml.YAMLToJSON(raw); err != nil {
				return document{yamlErr: fmt.Errorf("%s: %s", where, excerptError(err))}
			}
		}
		d.err = r.decodeObject(where, nil, jsonDoc, in, warn, 0)
		// A document decodeObject reads is an object (or empty): only one
		// it refuses needs the second look.
		if d.err != nil {
			d.foreign = notKubernetesObject(jsonDoc)
		}
	}
	// A document's objects alone are kept: a whole Inputs per document
	// was 200 MiB at 100,000 Services.
	for _, k := range input.ObjectKinds {
		for i := range k.Len(in) {
			d.objects = append(d.objects, k.At(in, i))
		}
	}
	return d
}

// notKubernetesObject says why a document converted to JSON is not a
// Kubernetes object, or "" when it is one or is empty.
func notKubernetesObject(doc []byte) string {
	doc = bytes.TrimSpace(doc)
	if len(doc) == 0 || bytes.Equal(doc, []byte("null")) {
		return ""
	}
	if doc[0] != '{' {
		return "not a YAML mapping"
	}
	var probe struct {
		APIVersion any `json:"apiVersion"`
		Kind       any `json:"kind"`
	}
	if err := json.Unmarshal(doc, &probe); err != nil {
		return ""
	}
	if s, ok := probe.APIVersion.(string); !ok || s == "" {
		return "no apiVersion"
	}
	if s, ok := probe.Kind.(string); !ok || s == "" {
		return "no kind"
	}
	return ""
}

// Parse is DefaultLimits.Parse.
func Parse(path string, data []byte, warn func(string)) (translator.Inputs, error) {
	return DefaultLimits.Parse(path, data, warn)
}

// Parser adapts Parse to the directory source's per-file parser.
func (l Limits) Parser(warn func(string)) func(path string, data []byte) (translator.Inputs, error) {
	return func(path string, data []byte) (translator.Inputs, error) { return l.Parse(path, data, warn) }
}

// Parser is DefaultLimits.Parser.
func Parser(warn func(string)) func(path string, data []byte) (translator.Inputs, error) {
	return DefaultLimits.Parser(warn)
}

// decodeObject adds one JSON document to in. Empty documents are skipped.
// prefix is where doc sits in its file's document (a List's item).
func (r reader) decodeObject(where string, prefix []pathStep, doc []byte, in *translator.Inputs, warn func(string), depth int) error {
	doc = bytes.TrimSpace(doc)
	if len(doc) == 0 || bytes.Equal(doc, []byte("null")) {
		return nil
	}
	if doc[0] != '{' {
		return fmt.Errorf("%s: not a Kubernetes object (a YAML mapping with apiVersion and kind)", where)
	}
	head, ok := scanHead(doc)
	if !ok {
		var err error
		if head, err = probeHead(doc); err != nil {
			return fmt.Errorf("%s: not a Kubernetes object: %s", where, excerptError(err))
		}
	}
	if head.apiVersion == "" || head.kind == "" {
		return fmt.Errorf("%s: not a Kubernetes object: apiVersion and kind are required", where)
	}
	key := kindKey{head.apiVersion, head.kind}
	if key == (kindKey{"v1", "List"}) {
		return r.decodeList(where, prefix, doc, in, warn, depth)
	}
	return r.decodeHeaded(where, prefix, head, doc, nil, in, warn)
}

// decodeHeaded is decodeObject past the head: doc is the object's JSON,
// or nil when tree, the object as crds.Decode makes it, is given instead
// (a Gateway API object of a document small enough for any API server).
func (r reader) decodeHeaded(where string, prefix []pathStep, head objectHead, doc []byte, tree map[string]any, in *translator.Inputs, warn func(string)) error {
	key := kindKey{head.apiVersion, head.kind}
	kind, known := kinds[key]
	ns := head.namespace
	switch {
	case known && kind.clusterScoped:
		ns = ""
	case ns == "":
		ns = DefaultNamespace
	}
	id := Excerpt(head.name)
	if ns != "" {
		id = Excerpt(ns) + "/" + id
	}
	what := fmt.Sprintf("%s (%s %s %s)", where, Excerpt(head.apiVersion), Excerpt(head.kind), id)
	objID := objectID{file: r.file, apiVersion: head.apiVersion, kind: head.kind, namespace: ns, name: head.name}
	// As the API server decodes: field names are case-sensitive, and an
	// unknown field is dropped with a warning, as kubectl apply
	// --validate=strict reports it.
	decode := func(obj any) error {
		strict, err := kjson.UnmarshalStrict(doc, obj, kjson.DisallowUnknownFields, kjson.DisallowDuplicateFields)
		if err != nil {
			return fmt.Errorf("%s: %s", what, excerptError(err))
		}
		for _, e := range strict {
			warn(fmt.Sprintf("%s: %s", what, excerptError(e)))
		}
		return nil
	}
	if r.crds != nil && isGatewayAPI(head.apiVersion) {
		// Admitted as the API server would, whether tlsplane reads the
		// kind or not: a file kubectl apply would refuse is refused.
		v, err := r.validatorFor(head.apiVersion)
		if err != nil {
			return fmt.Errorf("%s: %w", what, err)
		}
		a, err := admit(v, objID, prefix, doc, tree)
		if err != nil {
			var re *RefusedError
			if errors.As(err, &re) {
				return err
			}
			return fmt.Errorf("%s: %w", what, err)
		}
		for _, w := range a.warnings {
			warn(fmt.Sprintf("%s: %s", what, w))
		}
		decode = func(obj any) error {
			if err := a.decode(obj); err != nil {
				return fmt.Errorf("%s: %s", what, excerptError(err))
			}
			return nil
		}
	} else if known {
		// Checked as the API server checks an object once decoded; the
		// name and namespace, read from the head, are refused even when
		// the rest does not decode.
		metaErrs := validateMeta(head.kind, head.name, ns, kind.clusterScoped)
		if kind.clusterScoped {
			objID.namespace = ""
		}
		strictDecode := decode
		decode = func(obj any) error {
			err := strictDecode(obj)
			errs := metaErrs
			if err == nil {
				errs = append(errs, validateCore(obj)...)
			}
			if len(errs) > 0 {
				return refusals(objID, prefix, errs)
			}
			return err
		}
	}
	if !known {
		warn(fmt.Sprintf("%s: %s", what, skippedMessage))
		return nil
	}
	return kind.read(decode, ns, in)
}

// decodeList reads the items of a `kind: List`, as `kubectl get -o yaml`
// prints them.
func (r reader) decodeList(where string, prefix []pathStep, doc []byte, in *translator.Inputs, warn func(string), depth int) error {
	if depth >= maxListDepth {
		return fmt.Errorf("%s: Lists nested deeper than %d", where, maxListDepth)
	}
	var list struct {
		Items []json.RawMessage `json:"items"`
	}
	if err := json.Unmarshal(doc, &list); err != nil {
		return fmt.Errorf("%s: v1 List: %s", where, excerptError(err))
	}
	// Every refused item is reported, as every refused document is.
	refused := &RefusedError{}
	for i, item := range list.Items {
		at := append(append([]pathStep(nil), prefix...), pathStep{key: "items", index: -1}, pathStep{index: i})
		err := r.decodeObject(fmt.Sprintf("%s: items[%d]", where, i), at, item, in, warn, depth+1)
		var re *RefusedError
		switch {
		case errors.As(err, &re):
			refused.Refusals = append(refused.Refusals, re.Refusals...)
		case err != nil:
			return err
		}
	}
	if len(refused.Refusals) > 0 {
		return refused
	}
	return nil
}
