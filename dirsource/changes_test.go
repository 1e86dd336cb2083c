package dirsource

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/tlsplane/tlsplane/translator"
)

// configMapWith is a ConfigMap manifest whose data says v.
func configMapWith(name, v string) string {
	return configMap(name) + "data:\n  v: " + v + "\n"
}

func cmKey(name string) objectKey {
	return objectKey{translator.KindConfigMap, types.NamespacedName{Namespace: "shop", Name: name}}
}

// change is what a test expects of one translator.Change.
type change struct {
	name    string
	deleted bool
	v       string // the ConfigMap's data when not deleted
}

// waitChanges waits for the changed callback, then checks that Changes
// names exactly want, in order.
func (r *running) waitChanges(t *testing.T, want ...change) {
	t.Helper()
	select {
	case <-r.changes:
	case <-time.After(5 * time.Second):
		t.Fatalf("no change signalled within 5s\nlogs:\n%s", r.logs)
	}
	r.checkChanges(t, want...)
}

func (r *running) checkChanges(t *testing.T, want ...change) {
	t.Helper()
	got := r.src.Changes()
	if got.Resync {
		t.Fatalf("Changes = Resync, want %v", want)
	}
	var gotC []change
	for _, c := range got.Objects {
		if c.Kind != translator.KindConfigMap || c.Key.Namespace != "shop" {
			t.Fatalf("change of %s %s, want ConfigMaps of shop", c.Kind, c.Key)
		}
		if c.Object == nil {
			gotC = append(gotC, change{name: c.Key.Name, deleted: true})
			continue
		}
		if c.Object.GetName() != c.Key.Name {
			t.Fatalf("change keyed %s holds %s", c.Key, c.Object.GetName())
		}
		gotC = append(gotC, change{name: c.Key.Name, v: dataOf(c.Object)})
	}
	if !slices.Equal(gotC, want) {
		t.Fatalf("Changes = %+v, want %+v\nlogs:\n%s", gotC, want, r.logs)
	}
}

// dataOf is a served ConfigMap's data; "" for none.
func dataOf(o metav1.Object) string {
	cm, ok := o.(*corev1.ConfigMap)
	if !ok {
		return ""
	}
	return cm.Data["v"]
}

// firstChanges drains the first call, which is a Resync.
func (r *running) firstChanges(t *testing.T) {
	t.Helper()
	if c := r.src.Changes(); !c.Resync || len(c.Objects) != 0 {
		t.Fatalf("first Changes = %+v, want Resync alone", c)
	}
}

func TestChangesOfAnEditAreTheObjectsItChanged(t *testing.T) {
	dir := t.TempDir()
	for i := range 100 {
		write(t, filepath.Join(dir, fmt.Sprintf("f%03d.yaml", i)),
			configMapWith(fmt.Sprintf("a%03d", i), "1")+"---\n"+configMapWith(fmt.Sprintf("b%03d", i), "1"))
	}
	r := start(t, dir)
	r.firstChanges(t)
	before := r.src.Inputs()

	// Every object of the file changes: each is a change.
	writeAtomically(t, filepath.Join(dir, "f042.yaml"), configMapWith("a042", "2")+"---\n"+configMapWith("b042", "2"))
	r.waitChanges(t, change{name: "a042", v: "2"}, change{name: "b042", v: "2"})

	// One object of the file changes and one is added: the other, the same
	// as before, is not a change and keeps its pointer.
	kept := servedObject(r.src.Inputs(), "b042")
	write(t, filepath.Join(dir, "f042.yaml"), configMapWith("a042", "3")+"---\n"+configMapWith("b042", "2")+"---\n"+configMapWith("c042", "1"))
	r.waitChanges(t, change{name: "a042", v: "3"}, change{name: "c042", v: "1"})
	if servedObject(r.src.Inputs(), "b042") != kept {
		t.Error("an object the edit did not change is a new object")
	}
	if len(before.ConfigMaps) != 200 || dataOf(servedObject(before, "a042")) != "1" {
		t.Error("an earlier Inputs changed")
	}
	if got := len(r.src.Inputs().ConfigMaps); got != 201 {
		t.Errorf("Inputs holds %d ConfigMaps, want 201", got)
	}
	var reads dto.Metric
	if err := r.src.metrics.reads.Write(&reads); err != nil {
		t.Fatal(err)
	}
	if n := reads.GetHistogram().GetSampleCount(); n < 2 {
		t.Errorf("tlsplane_source_read_duration_seconds counts %d reads, want the 2 after the edits", n)
	}
}

func TestChangesOfADeletedFileAreDeletions(t *testing.T) {
	dir := t.TempDir()
	write(t, filepath.Join(dir, "a.yaml"), configMap("a1")+"---\n"+configMap("a2"))
	write(t, filepath.Join(dir, "b.yaml"), configMap("b"))
	r := start(t, dir)
	r.firstChanges(t)
	if err := os.Remove(filepath.Join(dir, "a.yaml")); err != nil {
		t.Fatal(err)
	}
	r.waitChanges(t, change{name: "a1", deleted: true}, change{name: "a2", deleted: true})
	r.waitNames(t, "b")
}

func TestChangesOfABrokenFileAreNone(t *testing.T) {
	dir := t.TempDir()
	write(t, filepath.Join(dir, "a.yaml"), configMapWith("a", "1"))
	write(t, filepath.Join(dir, "b.yaml"), configMapWith("b", "1"))
	r := start(t, dir)
	r.firstChanges(t)
	write(t, filepath.Join(dir, "a.yaml"), "kind: ConfigMap\nmetadata: [not, a, map\n")
	r.waitErrors(t, 1)
	select {
	case <-r.changes:
		t.Fatal("a broken file signalled a change")
	case <-time.After(3 * defaultSettle):
	}
	r.checkChanges(t)
	r.waitNames(t, "a", "b")
	// The next edit elsewhere is the only change.
	write(t, filepath.Join(dir, "b.yaml"), configMapWith("b", "2"))
	r.waitChanges(t, change{name: "b", v: "2"})
}

func TestChangesFollowWhichDuplicateIsServed(t *testing.T) {
	dir := t.TempDir()
	write(t, filepath.Join(dir, "a.yaml"), configMapWith("same", "a"))
	r := start(t, dir)
	r.firstChanges(t)

	// A later file's duplicate is shadowed: nothing served changes.
	write(t, filepath.Join(dir, "b.yaml"), configMapWith("same", "b")+"---\n"+configMapWith("other", "b"))
	r.waitChanges(t, change{name: "other", v: "b"})
	if got := dataOf(servedObject(r.src.Inputs(), "same")); got != "a" {
		t.Fatalf("served same from %q, want a.yaml's", got)
	}
	// The shadowed duplicate is edited: still nothing served changes.
	write(t, filepath.Join(dir, "b.yaml"), configMapWith("same", "b2")+"---\n"+configMapWith("other", "b2"))
	r.waitChanges(t, change{name: "other", v: "b2"})

	// The first file goes: the shadowed object is served now.
	if err := os.Remove(filepath.Join(dir, "a.yaml")); err != nil {
		t.Fatal(err)
	}
	r.waitChanges(t, change{name: "same", v: "b2"})
	if got := dataOf(servedObject(r.src.Inputs(), "same")); got != "b2" {
		t.Fatalf("served same from %q, want b.yaml's", got)
	}

	// It comes back: it wins again.
	write(t, filepath.Join(dir, "a.yaml"), configMapWith("same", "a3"))
	r.waitChanges(t, change{name: "same", v: "a3"})
	if got := dataOf(servedObject(r.src.Inputs(), "same")); got != "a3" {
		t.Fatalf("served same from %q, want a.yaml's", got)
	}
	if !strings.Contains(r.logs.String(), "duplicate object ignored") {
		t.Errorf("duplicate not reported:\n%s", r.logs)
	}
}

// A file whose content changes with no event naming it (a hard link
// written through a path outside the directory) is not read until the
// periodic resync: a read follows what events name, not the whole
// directory.
func TestChangesReadOnlyWhatEventsNameUntilTheResync(t *testing.T) {
	dir, outside := t.TempDir(), t.TempDir()
	write(t, filepath.Join(outside, "b.yaml"), configMapWith("b", "1"))
	if err := os.Link(filepath.Join(outside, "b.yaml"), filepath.Join(dir, "b.yaml")); err != nil {
		t.Skipf("no hard links here: %v", err)
	}
	write(t, filepath.Join(dir, "a.yaml"), configMapWith("a", "1"))
	r := startWithResync(t, dir, 2*time.Second)
	r.firstChanges(t)

	// In place, so the inode the directory's link names changes.
	write(t, filepath.Join(outside, "b.yaml"), configMapWith("b", "2"))
	write(t, filepath.Join(dir, "a.yaml"), configMapWith("a", "2"))
	r.waitChanges(t, change{name: "a", v: "2"})
	if got := dataOf(servedObject(r.src.Inputs(), "b")); got != "1" {
		t.Fatalf("b read without an event naming it (v=%q): the read was not limited to the named paths", got)
	}
	r.waitChanges(t, change{name: "b", v: "2"}) // the resync
}

// Applying each Changes to the Inputs before it gives the Inputs after it,
// and those are what a fresh read of the directory gives, after every
// burst of a random sequence of writes, edits, deletions, re-creations and
// directories coming and going.
func TestChangesAppliedToThePreviousInputsGiveTheCurrentOnes(t *testing.T) {
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, 15))
	dir := t.TempDir()
	paths := []string{"a.yaml", "b.yaml", "c.yml", "d.json", "sub/e.yaml", "sub/f.yaml", "sub/deeper/g.yaml"}
	names := []string{"n0", "n1", "n2", "n3", "n4", "n5"} // few, so files define duplicates
	manifest := func(gen int) string {
		var docs []string
		for _, n := range names {
			if rng.IntN(3) == 0 {
				docs = append(docs, configMapWith(n, fmt.Sprint(gen)))
			}
		}
		if len(docs) == 0 {
			docs = append(docs, configMapWith(names[rng.IntN(len(names))], fmt.Sprint(gen)))
		}
		return strings.Join(docs, "---\n")
	}
	put := func(rel string, gen int) {
		path := filepath.Join(dir, rel)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if rng.IntN(2) == 0 {
			writeAtomically(t, path, manifest(gen))
		} else {
			write(t, path, manifest(gen))
		}
	}
	for _, rel := range paths[:3] {
		put(rel, 0)
	}
	r := start(t, dir)
	r.firstChanges(t)
	previous := served(r.src.Inputs())

	for step := 1; step <= 40; step++ {
		var did []string
		for range 1 + rng.IntN(3) {
			rel := paths[rng.IntN(len(paths))]
			switch op := rng.IntN(10); {
			case op < 6:
				put(rel, step)
				did = append(did, "write "+rel)
			case op < 9:
				os.Remove(filepath.Join(dir, rel))
				did = append(did, "remove "+rel)
			default:
				os.RemoveAll(filepath.Join(dir, "sub"))
				did = append(did, "remove sub/")
			}
		}
		want := freshRead(t, dir)
		deadline := time.Now().Add(5 * time.Second)
		for !sameObjects(served(r.src.Inputs()), want) {
			if time.Now().After(deadline) {
				t.Fatalf("step %d (%v): served %v, a fresh read gives %v\nlogs:\n%s", step, did, show(served(r.src.Inputs())), show(want), r.logs)
			}
			time.Sleep(10 * time.Millisecond)
		}
		changes := r.src.Changes()
		current := served(r.src.Inputs())
		if changes.Resync {
			t.Fatalf("step %d: Changes = Resync", step)
		}
		if !slices.IsSortedFunc(changes.Objects, func(a, b translator.Change) int {
			return compareKeys(objectKey{a.Kind, a.Key}, objectKey{b.Kind, b.Key})
		}) {
			t.Fatalf("step %d: Changes not in key order: %v", step, changes.Objects)
		}
		for _, c := range changes.Objects {
			if c.Object == nil {
				delete(previous, objectKey{c.Kind, c.Key})
			} else {
				previous[objectKey{c.Kind, c.Key}] = c.Object
			}
		}
		if len(previous) != len(current) {
			t.Fatalf("step %d (%v): the previous Inputs with the Changes hold %d objects, the current %d", step, did, len(previous), len(current))
		}
		for k, o := range current {
			if previous[k] != o {
				t.Fatalf("step %d (%v): %v is %v after applying the Changes, %v in Inputs", step, did, k, previous[k], o)
			}
		}
	}
}

// served maps Inputs' objects by key.
func served(in translator.Inputs) map[objectKey]metav1.Object {
	out := map[objectKey]metav1.Object{}
	for _, k := range keyedObjects(&in) {
		out[k.key] = k.object
	}
	return out
}

func servedObject(in translator.Inputs, name string) metav1.Object {
	return served(in)[cmKey(name)]
}

// freshRead reads dir as a new source would.
func freshRead(t *testing.T, dir string) map[objectKey]metav1.Object {
	t.Helper()
	s := newStepper(t, dir)
	if _, _, err := s.src.rescan(nil); err != nil {
		t.Fatal(err)
	}
	return served(s.src.Inputs())
}

func sameObjects(a, b map[objectKey]metav1.Object) bool {
	if len(a) != len(b) {
		return false
	}
	for k, o := range a {
		if !equality.Semantic.DeepEqual(o, b[k]) {
			return false
		}
	}
	return true
}

func show(m map[objectKey]metav1.Object) []string {
	var out []string
	for k, o := range m {
		out = append(out, k.Name+"="+dataOf(o))
	}
	slices.Sort(out)
	return out
}
