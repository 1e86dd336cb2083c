package document

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"sort"

	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"
	"sigs.k8s.io/yaml"

	"github.com/tlsplane/tlsplane/translator"
	"github.com/tlsplane/tlsplane/translator/input"
)

// Document formats for Render.
const (
	FormatYAML = "yaml"
	FormatJSON = "json"
)

// Render is the document `tlsplane translate` prints, and golden
// files hold: the keys clusters, endpoints and secrets (Envoy's JSON
// mapping, `@type` on Any values, as Envoy's config dump shows them;
// client certificates' private keys redacted) and
// policies (the input policies, sorted, with their computed status). With
// Gateway API inputs it adds fleets (each Gateway fleet's listeners, routes
// and certificates, private keys redacted), gatewayclasses, gateways,
// httproutes, grpcroutes, tlsroutes, tcproutes, udproutes and xbackends (ours, with
// their computed status; each key only when it has some). It is pure; keys are
// sorted, so equal inputs give equal bytes.
func Render(in translator.Inputs, out translator.Output, format string) ([]byte, error) {
	var buf bytes.Buffer
	if err := RenderTo(&buf, in, out, format); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// RenderTo is Render writing to w as the document is made: in YAML, each
// element is written once made, so the document is never held whole
// (390 MB at 100,000 Services). After an error, w holds the document up
// to the element that failed.
func RenderTo(w io.Writer, in translator.Inputs, out translator.Output, format string) error {
	policies := in.Policies
	doc := map[string][]any{
		"clusters":  make([]any, 0, len(out.Clusters)),
		"endpoints": make([]any, 0, len(out.Endpoints)),
		"secrets":   make([]any, 0, len(out.Secrets)),
		"policies":  make([]any, 0, len(policies)),
	}
	add := func(key, what string, m proto.Message) {
		doc[key] = append(doc[key], protoNode{what, m})
	}
	for _, c := range out.Clusters {
		add("clusters", "cluster "+c.Name, c)
	}
	for _, e := range out.Endpoints {
		add("endpoints", "endpoints "+e.ClusterName, e)
	}
	for _, s := range out.Secrets {
		doc["secrets"] = append(doc["secrets"], deferred(func() (any, error) {
			return protoNode{"secret " + s.Name, redacted(s)}, nil
		}))
	}
	for _, p := range translator.UniquePolicies(policies) {
		doc["policies"] = append(doc["policies"], deferred(func() (any, error) {
			v, err := jsonValue(withStatus(p, out))
			if err != nil {
				return nil, fmt.Errorf("BackendTLSPolicy %s/%s: %w", p.Namespace, p.Name, err)
			}
			return v, nil
		}))
	}

	renderGatewayAPI(doc, in, out)
	if format == FormatJSON {
		if err := makeDeferred(doc); err != nil {
			return err
		}
	}
	return EncodeTo(w, doc, format)
}

// deferred is a document element made only when it is written: YAML
// writes each on one of its workers, so the document's values are never
// all held at once. Its error names the object.
type deferred func() (any, error)

// makeDeferred replaces each deferred element of doc by its plain value
// (plainValue's), in order, stopping at the first error.
func makeDeferred(doc map[string][]any) error {
	keys := make([]string, 0, len(doc))
	for k := range doc {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		for i, v := range doc[k] {
			var err error
			if d, ok := v.(deferred); ok {
				if v, err = d(); err != nil {
					return err
				}
			}
			if doc[k][i], err = plainValue(v); err != nil {
				return err
			}
		}
	}
	return nil
}

// Encode writes a document value (maps, slices and the values ProtoValue
// makes) in format, keys sorted, as Render does.
func Encode(doc any, format string) ([]byte, error) {
	var buf bytes.Buffer
	if err := EncodeTo(&buf, doc, format); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// EncodeTo is Encode writing to w. A YAML document of lists (what Render
// builds) is converted one element at a time: sigs.k8s.io/yaml's
// JSON→YAML round trip of the whole document was 2.4 GiB and 39 s at
// 10,000 Services.
func EncodeTo(w io.Writer, doc any, format string) error {
	switch format {
	case FormatJSON:
		return encodeJSON(w, doc)
	case FormatYAML, "":
		if lists, ok := doc.(map[string][]any); ok {
			return encodeYAMLLists(w, lists)
		}
		var buf bytes.Buffer
		if err := encodeJSON(&buf, doc); err != nil {
			return err
		}
		y, err := yaml.JSONToYAML(buf.Bytes())
		if err != nil {
			return err
		}
		_, err = w.Write(y)
		return err
	}
	return fmt.Errorf("output format %q: want %q or %q", format, FormatYAML, FormatJSON)
}

func encodeJSON(w io.Writer, doc any) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	return enc.Encode(doc)
}

// withStatus is a copy of the policy carrying its computed status and the
// type meta a reader expects.
func withStatus(p *gwv1.BackendTLSPolicy, out translator.Output) *gwv1.BackendTLSPolicy {
	c := p.DeepCopy()
	c.APIVersion, c.Kind = gwv1.GroupVersion.String(), "BackendTLSPolicy"
	nn := input.NameOf(c.Namespace, c.Name)
	c.Namespace = nn.Namespace
	c.Status = out.Statuses[nn]
	return c
}

// ProtoValue goes through protojson (Envoy's mapping) and back to a plain
// value: protojson's spacing is deliberately unstable.
func ProtoValue(m proto.Message) (any, error) {
	b, err := protojson.Marshal(m)
	if err != nil {
		return nil, err
	}
	return decodeJSON(b)
}

// jsonValue is v's JSON, for the YAML writer to walk (plainValue decodes
// it for the rest).
func jsonValue(v any) (any, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	return jsonText(b), nil
}

// decodeJSON keeps numbers as written, so no value is rounded.
func decodeJSON(b []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var v any
	err := dec.Decode(&v)
	return v, err
}
