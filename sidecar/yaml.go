package sidecar

import (
	"google.golang.org/protobuf/encoding/protojson"
	"sigs.k8s.io/yaml"
)

// YAML is Bootstrap as Envoy reads it with -c: proto field names, and
// bytes that depend only on o (protojson varies its spacing; the YAML
// conversion re-encodes and sorts keys).
func YAML(o Options) ([]byte, error) {
	boot, err := Bootstrap(o)
	if err != nil {
		return nil, err
	}
	js, err := protojson.MarshalOptions{UseProtoNames: true}.Marshal(boot)
	if err != nil {
		return nil, err
	}
	return yaml.JSONToYAML(js)
}
