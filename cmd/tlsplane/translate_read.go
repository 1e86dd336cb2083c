package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"

	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"

	"github.com/tlsplane/tlsplane/manifests"
	"github.com/tlsplane/tlsplane/translator"
)

// readManifests is manifests.Read for `tlsplane translate`, with one
// difference: in a directory, a document that is not a Kubernetes object
// (examples/envoy.yaml beside the manifests) is skipped with a warning,
// so `tlsplane translate examples/` works. A file named explicitly must
// hold only Kubernetes objects. YAML that does not parse is an error
// everywhere. The files are bounded by limits, each and together, and a
// directory's are read only from inside it (manifests.ReadFileIn).
func readManifests(paths []string, limits manifests.Limits, warn func(string)) (translator.Inputs, error) {
	var parts []manifests.Part
	var read int64
	add := func(f manifests.DirFile) error {
		data, err := limits.ReadDirFile(f)
		if err != nil {
			return err
		}
		if err := limits.Total(f.Path, int64(len(data)), read); err != nil {
			return err
		}
		read += int64(len(data))
		if f.Root != "" {
			data = withoutForeignDocuments(f.Path, data, limits.AliasBytes, warn)
		}
		in, err := limits.Parse(f.Path, data, warn)
		if err != nil {
			return err
		}
		parts = append(parts, manifests.Part{Source: f.Path, Inputs: in})
		return nil
	}
	for _, p := range paths {
		info, err := os.Stat(p)
		if err != nil {
			return translator.Inputs{}, err
		}
		if !info.IsDir() {
			if err := add(manifests.DirFile{Path: p}); err != nil {
				return translator.Inputs{}, err
			}
			continue
		}
		files, err := manifests.Files(p)
		if err != nil {
			return translator.Inputs{}, err
		}
		for _, f := range files {
			if err := add(f); err != nil {
				return translator.Inputs{}, err
			}
		}
	}
	return manifests.Merge(parts, warn), nil
}

// withoutForeignDocuments replaces each document of data that parses as
// YAML but is not a Kubernetes object (a mapping with apiVersion and kind)
// by an empty one, with a warning, so manifests.Parse numbers the others
// as they are in the file. Documents that do not parse are kept: Parse
// reports them, as it refuses a file whose aliases expand by more than
// aliasBytes.
func withoutForeignDocuments(path string, data []byte, aliasBytes int64, warn func(string)) []byte {
	if len(data) > 0 && data[len(data)-1] != '\n' {
		data = append(data[:len(data):len(data)], '\n')
	}
	reader := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(data)))
	var out bytes.Buffer
	skipped := false
	left := aliasBytes
	for doc := 1; ; doc++ {
		raw, err := reader.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return data
		}
		// Decoding expands aliases: a file over the bound is left to
		// manifests.Parse to refuse, before anything is expanded.
		n, err := manifests.AliasBytes(raw)
		if err != nil || n > left {
			return data
		}
		left -= n
		if why := notKubernetesObject(raw); why != "" {
			warn(fmt.Sprintf("%s: document %d: skipped: not a Kubernetes object (%s)", path, doc, why))
			raw, skipped = []byte("null\n"), true
		}
		out.WriteString("---\n")
		out.Write(raw)
		if !bytes.HasSuffix(raw, []byte("\n")) {
			out.WriteByte('\n')
		}
	}
	if !skipped {
		return data
	}
	return out.Bytes()
}

// notKubernetesObject says why a parsed document is not a Kubernetes
// object, or "" when it is one, is empty, or does not parse.
func notKubernetesObject(raw []byte) string {
	doc, err := yaml.YAMLToJSON(raw)
	if err != nil {
		return ""
	}
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
