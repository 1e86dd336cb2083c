package kube

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/tlsplane/tlsplane/e2e/apiserver"
)

// The release channels the corpus is judged under, each by an API server
// with that channel's CRDs.
var admissionChannels = []string{"standard", "experimental"}

// expectation is what a case's source says the API server decides.
type expectation string

const (
	wantValid   expectation = "valid"
	wantInvalid expectation = "invalid"
)

// admissionCase is one object of the corpus, judged under each of its
// channels by the API server and by tlsplane.
type admissionCase struct {
	// name says where the object comes from: file, document and kind/name.
	name     string
	channels []string
	want     expectation
	obj      *unstructured.Unstructured
}

// gatewayAPIGroups are the groups the corpus compares; objects of other
// groups (Namespaces, Services, Secrets of the examples) are counted and
// skipped.
var gatewayAPIGroups = []string{"gateway.networking.k8s.io", "gateway.networking.x-k8s.io"}

// corpusSource is one directory of the corpus: every *.yaml below it holds
// objects of expectation want, judged under channels.
type corpusSource struct {
	label    string // how case names start: module or testdata
	root     string // what case names are relative to
	dir      string // below root
	channels []string
	want     expectation
}

// moduleCorpus is the Gateway API module's own examples (valid) and
// invalid examples (each refused): a corpus no one here tuned. A
// standard example holds in the experimental channel too.
func moduleCorpus(moduleDir string) []corpusSource {
	both := admissionChannels
	exp := []string{"experimental"}
	return []corpusSource{
		{"module", moduleDir, "examples/standard", both, wantValid},
		{"module", moduleDir, "examples/experimental", exp, wantValid},
		{"module", moduleDir, "hack/invalid-examples/standard", both, wantInvalid},
		{"module", moduleDir, "hack/invalid-examples/experimental", exp, wantInvalid},
	}
}

// ourCorpus is e2e/testdata/admission/<channels>/<valid|invalid>/*.yaml:
// objects mirroring the Gateway API repository's tests/cel cases (file
// names <upstream test>--<case>) and cases of ours (ours--<what>).
// <channels> is both, standard or experimental, as the upstream test's
// build tag says.
func ourCorpus() []corpusSource {
	_, file, _, _ := runtime.Caller(0)
	root := filepath.Join(filepath.Dir(file), "..", "testdata", "admission")
	var sources []corpusSource
	for _, ch := range []struct {
		dir      string
		channels []string
	}{{"both", admissionChannels}, {"standard", []string{"standard"}}, {"experimental", []string{"experimental"}}} {
		for _, want := range []expectation{wantValid, wantInvalid} {
			sources = append(sources, corpusSource{"testdata", root, filepath.Join(ch.dir, string(want)), ch.channels, want})
		}
	}
	return sources
}

// loadCorpus reads every source's objects; skipped counts the objects of
// other groups. A source directory that does not exist is an error: the
// corpus must not shrink without the test saying so.
func loadCorpus(sources []corpusSource) (cases []admissionCase, skipped map[string]int, err error) {
	skipped = map[string]int{}
	for _, src := range sources {
		dir := filepath.Join(src.root, src.dir)
		if _, err := os.Stat(dir); err != nil {
			return nil, nil, fmt.Errorf("corpus directory %s: %w", dir, err)
		}
		err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() || !strings.HasSuffix(path, ".yaml") {
				return err
			}
			rel, _ := filepath.Rel(src.root, path)
			data, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			objs, err := apiserver.DecodeManifest(data)
			if err != nil {
				return fmt.Errorf("%s: %w", rel, err)
			}
			for i, obj := range objs {
				if !slices.Contains(gatewayAPIGroups, obj.GroupVersionKind().Group) {
					skipped[obj.GetKind()]++
					continue
				}
				name := fmt.Sprintf("%s:%s", src.label, rel)
				if len(objs) > 1 {
					name += fmt.Sprintf("#%d", i+1)
				}
				name += fmt.Sprintf(" %s/%s", obj.GetKind(), shortName(obj.GetName()))
				cases = append(cases, admissionCase{name: name, channels: src.channels, want: src.want, obj: obj})
			}
			return nil
		})
		if err != nil {
			return nil, nil, err
		}
	}
	return cases, skipped, nil
}

// shortName keeps a case name readable when the object's name is the
// case (a 300-character name).
func shortName(name string) string {
	if len(name) <= 63 {
		return name
	}
	return fmt.Sprintf("%s…(%d characters)", name[:20], len(name))
}
