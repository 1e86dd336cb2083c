package manifests

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	kjson "sigs.k8s.io/json"
	"sigs.k8s.io/yaml"

	"github.com/tlsplane/tlsplane/translator"
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
// MaxExcerptBytes.
func (l Limits) Parse(path string, data []byte, warn func(string)) (translator.Inputs, error) {
	l = l.orDefaults()
	if warn == nil {
		warn = func(string) {}
	}
	if int64(len(data)) > l.FileBytes {
		return translator.Inputs{}, l.fileTooLarge(path, int64(len(data)))
	}
	var in translator.Inputs
	budget := expansionBudget{limit: l.AliasBytes, left: l.AliasBytes}
	// The YAML line reader drops a last line that exactly fills its 4 KiB
	// buffer when no newline ends it: a file cut at that size would lose its
	// objects silently.
	if len(data) > 0 && data[len(data)-1] != '\n' {
		data = append(data[:len(data):len(data)], '\n')
	}
	reader := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(data)))
	for doc := 1; ; doc++ {
		raw, err := reader.Read()
		if errors.Is(err, io.EOF) {
			return in, nil
		}
		if err != nil {
			return translator.Inputs{}, fmt.Errorf("%s: document %d: %s", path, doc, excerptError(err))
		}
		if err := budget.spend(path, doc, raw); err != nil {
			return translator.Inputs{}, err
		}
		where := fmt.Sprintf("%s: document %d", path, doc)
		jsonDoc, err := yaml.YAMLToJSON(raw)
		if err != nil {
			return translator.Inputs{}, fmt.Errorf("%s: %s", where, excerptError(err))
		}
		if err := decodeObject(where, jsonDoc, &in, warn, 0); err != nil {
			return translator.Inputs{}, err
		}
	}
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
func decodeObject(where string, doc []byte, in *translator.Inputs, warn func(string), depth int) error {
	doc = bytes.TrimSpace(doc)
	if len(doc) == 0 || bytes.Equal(doc, []byte("null")) {
		return nil
	}
	if doc[0] != '{' {
		return fmt.Errorf("%s: not a Kubernetes object (a YAML mapping with apiVersion and kind)", where)
	}
	var probe struct {
		metav1.TypeMeta
		Metadata struct {
			Name      string `json:"name"`
			Namespace string `json:"namespace"`
		} `json:"metadata"`
	}
	if err := json.Unmarshal(doc, &probe); err != nil {
		return fmt.Errorf("%s: not a Kubernetes object: %s", where, excerptError(err))
	}
	if probe.APIVersion == "" || probe.Kind == "" {
		return fmt.Errorf("%s: not a Kubernetes object: apiVersion and kind are required", where)
	}
	key := kindKey{probe.APIVersion, probe.Kind}
	if key == (kindKey{"v1", "List"}) {
		return decodeList(where, doc, in, warn, depth)
	}
	kind, known := kinds[key]
	ns := probe.Metadata.Namespace
	switch {
	case known && kind.clusterScoped:
		ns = ""
	case ns == "":
		ns = DefaultNamespace
	}
	id := Excerpt(probe.Metadata.Name)
	if ns != "" {
		id = Excerpt(ns) + "/" + id
	}
	what := fmt.Sprintf("%s (%s %s %s)", where, Excerpt(probe.APIVersion), Excerpt(probe.Kind), id)
	if !known {
		warn(fmt.Sprintf("%s: %s", what, skippedMessage))
		return nil
	}
	errs := validateMeta(probe.Kind, probe.Metadata.Name, ns, kind.clusterScoped)
	if probe.Kind == "Service" {
		errs = append(errs, validateService(doc)...)
	}
	errs = append(errs, validateGatewayAPIStrings(probe.APIVersion, doc)...)
	if len(errs) > 0 {
		return fmt.Errorf("%s: refused, as the API server would refuse it: %s", what, joined(errs))
	}
	return kind.read(func(obj any) error {
		// As the API server decodes: field names are case-sensitive, and
		// an unknown field is dropped with a warning, as kubectl apply
		// --validate=strict reports it.
		strict, err := kjson.UnmarshalStrict(doc, obj, kjson.DisallowUnknownFields, kjson.DisallowDuplicateFields)
		if err != nil {
			return fmt.Errorf("%s: %s", what, excerptError(err))
		}
		for _, e := range strict {
			warn(fmt.Sprintf("%s: %s", what, excerptError(e)))
		}
		return nil
	}, ns, in)
}

// decodeList reads the items of a `kind: List`, as `kubectl get -o yaml`
// prints them.
func decodeList(where string, doc []byte, in *translator.Inputs, warn func(string), depth int) error {
	if depth >= maxListDepth {
		return fmt.Errorf("%s: Lists nested deeper than %d", where, maxListDepth)
	}
	var list struct {
		Items []json.RawMessage `json:"items"`
	}
	if err := json.Unmarshal(doc, &list); err != nil {
		return fmt.Errorf("%s: v1 List: %s", where, excerptError(err))
	}
	for i, item := range list.Items {
		if err := decodeObject(fmt.Sprintf("%s: items[%d]", where, i), item, in, warn, depth+1); err != nil {
			return err
		}
	}
	return nil
}
