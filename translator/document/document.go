package document

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"

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
	policies := in.Policies
	doc := map[string][]any{
		"clusters":  make([]any, 0, len(out.Clusters)),
		"endpoints": make([]any, 0, len(out.Endpoints)),
		"secrets":   make([]any, 0, len(out.Secrets)),
		"policies":  make([]any, 0, len(policies)),
	}
	add := func(key string, m proto.Message) error {
		v, err := ProtoValue(m)
		if err != nil {
			return err
		}
		doc[key] = append(doc[key], v)
		return nil
	}
	for _, c := range out.Clusters {
		if err := add("clusters", c); err != nil {
			return nil, fmt.Errorf("cluster %s: %w", c.Name, err)
		}
	}
	for _, e := range out.Endpoints {
		if err := add("endpoints", e); err != nil {
			return nil, fmt.Errorf("endpoints %s: %w", e.ClusterName, err)
		}
	}
	for _, s := range out.Secrets {
		if err := add("secrets", redacted(s)); err != nil {
			return nil, fmt.Errorf("secret %s: %w", s.Name, err)
		}
	}
	for _, p := range translator.UniquePolicies(policies) {
		v, err := jsonValue(withStatus(p, out))
		if err != nil {
			return nil, fmt.Errorf("BackendTLSPolicy %s/%s: %w", p.Namespace, p.Name, err)
		}
		doc["policies"] = append(doc["policies"], v)
	}

	if err := renderGatewayAPI(doc, in, out); err != nil {
		return nil, err
	}
	return Encode(doc, format)
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

func jsonValue(v any) (any, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	return decodeJSON(b)
}

// decodeJSON keeps numbers as written, so no value is rounded.
func decodeJSON(b []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var v any
	err := dec.Decode(&v)
	return v, err
}
