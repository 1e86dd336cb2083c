package manifests

import (
	"encoding/json"
	"reflect"
	"testing"

	kjson "sigs.k8s.io/json"
	"sigs.k8s.io/yaml"

	"github.com/tlsplane/tlsplane/crds"
	"github.com/tlsplane/tlsplane/translator"
)

// TestAdmittedDecodeIsJSONDecode: every admitted Gateway API object of
// the repository's manifests and of perf/world, decoded from the admitted
// tree, is exactly (reflect.DeepEqual: nil and empty apart) what the
// API server's JSON of it decodes to, and that JSON has no unknown field.
func TestAdmittedDecodeIsJSONDecode(t *testing.T) {
	docs := corpusAndWorldDocuments(t)
	compared := 0
	var sink translator.Inputs
	for _, channel := range []string{crds.Standard, crds.Experimental} {
		for _, raw := range docs {
			jsonDoc, err := yaml.YAMLToJSON(raw)
			if err != nil {
				continue
			}
			var probe struct {
				APIVersion, Kind string
				Metadata         struct{ Name, Namespace string }
			}
			if json.Unmarshal(jsonDoc, &probe) != nil || !isGatewayAPI(probe.APIVersion) {
				continue
			}
			kind, known := kinds[kindKey{probe.APIVersion, probe.Kind}]
			if !known {
				continue
			}
			r := reader{file: "corpus.yaml"}
			if r.crds, err = crds.Load(channel); err != nil {
				t.Fatal(err)
			}
			v, err := r.validatorFor(probe.APIVersion)
			if err != nil {
				t.Fatal(err)
			}
			ns := probe.Metadata.Namespace
			if ns == "" && !kind.clusterScoped {
				ns = DefaultNamespace
			}
			a, err := admit(v, objectID{file: "corpus.yaml", apiVersion: probe.APIVersion, kind: probe.Kind, namespace: ns, name: probe.Metadata.Name}, nil, jsonDoc, nil)
			if err != nil {
				continue // refused: nothing decoded
			}
			viaJSON, err := json.Marshal(a.obj)
			if err != nil {
				t.Fatal(err)
			}
			var fromTree, fromJSON any
			var unknownJSON []string
			if err := kind.read(func(o any) error {
				fromTree = o
				return a.decode(o)
			}, ns, &sink); err != nil {
				t.Fatalf("%s %s/%s: from the admitted tree: %v", probe.Kind, ns, probe.Metadata.Name, err)
			}
			if err := kind.read(func(o any) error {
				fromJSON = o
				strict, err := kjson.UnmarshalStrict(viaJSON, o, kjson.DisallowUnknownFields, kjson.DisallowDuplicateFields)
				for _, e := range strict {
					unknownJSON = append(unknownJSON, e.Error())
				}
				return err
			}, ns, &sink); err != nil {
				t.Fatalf("%s %s/%s: from JSON: %v", probe.Kind, ns, probe.Metadata.Name, err)
			}
			if !reflect.DeepEqual(fromTree, fromJSON) {
				t.Errorf("%s channel, %s %s/%s: decoded from the tree\n%#v\nfrom JSON\n%#v", channel, probe.Kind, ns, probe.Metadata.Name, fromTree, fromJSON)
			}
			if len(unknownJSON) > 0 {
				t.Errorf("%s channel, %s %s/%s: the admitted object has unknown fields %q", channel, probe.Kind, ns, probe.Metadata.Name, unknownJSON)
			}
			compared++
		}
	}
	if compared < 100 {
		t.Errorf("compared %d admitted objects; want the corpus's hundreds", compared)
	}
	t.Logf("compared %d admitted objects", compared)
}
