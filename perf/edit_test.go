package perf

import (
	"flag"
	"fmt"
	"testing"
	"time"

	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"

	"github.com/tlsplane/tlsplane/snapshots"
	"github.com/tlsplane/tlsplane/translator"
)

var benchNow = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// BenchmarkEditToSnapshot: one CA ConfigMap among n changes; an operation is
// what the pipeline does after the debounce with a source that says what
// changed: a Translator's Update with that one change, then publishing the
// new snapshot set to one connected fleet. translate-ns/op and
// publish-ns/op split it.
func BenchmarkEditToSnapshot(b *testing.B) {
	for _, n := range editSizes() {
		b.Run(fmt.Sprintf("n=%d", n), func(b *testing.B) {
			in := Inputs(n)
			cm := in.ConfigMaps[n/2]
			benchmarkChange(b, in, func(rv int) translator.Change {
				// Only the changed object is new: a source that says what
				// changed hands over nothing else.
				cm = RotatedCA(cm, rv)
				return changeOf(translator.KindConfigMap, cm)
			})
		})
	}
}

var editMax = flag.Int("edit.max", 100000, "the largest n of BenchmarkEditToSnapshot (1,000, 10,000, then 100,000)")

// editSizes are 1,000, 10,000 and 100,000 Services, up to -edit.max.
func editSizes() []int {
	var sizes []int
	for _, n := range []int{1000, 10000, 100000} {
		if n <= *editMax {
			sizes = append(sizes, n)
		}
	}
	return sizes
}

// BenchmarkPublish is snapshot building alone: a whole new translation of
// n Services (every resource new) published to one fleet. Three outputs
// take turns, so each was last published two publishes ago and the
// Publisher has forgotten its resources: every publish is cold.
func BenchmarkPublish(b *testing.B) {
	for _, n := range []int{1000, 10000} {
		b.Run(fmt.Sprintf("n=%d", n), func(b *testing.B) {
			in := Inputs(n)
			pub := snapshots.New(snapshots.Options{})
			pub.NodeStreamOpened(&corev3.Node{Id: "envoy-0", Cluster: "edge"})
			outs := []translator.Output{
				translator.Translate(in, nil, benchNow, translator.Options{}),
				translator.Translate(RotateCA(in, n/2, 2), nil, benchNow, translator.Options{}),
				translator.Translate(RotateCA(in, n/2, 3), nil, benchNow, translator.Options{}),
			}
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				i++
				if _, err := pub.Publish(outs[i%len(outs)]); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
