package dirsource

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"

	"github.com/tlsplane/tlsplane/manifests"
	"github.com/tlsplane/tlsplane/translator"
)

// parseConfigMaps is a minimal parser: the source's file handling is under
// test here, not the manifest formats.
func parseConfigMaps(path string, data []byte) (translator.Inputs, error) {
	var in translator.Inputs
	for i, doc := range strings.Split(string(data), "\n---\n") {
		if strings.TrimSpace(doc) == "" {
			continue
		}
		cm := &corev1.ConfigMap{}
		if err := yaml.UnmarshalStrict([]byte(doc), cm); err != nil {
			return translator.Inputs{}, fmt.Errorf("%s: document %d: %w", path, i, err)
		}
		if cm.Kind != "ConfigMap" {
			return translator.Inputs{}, fmt.Errorf("%s: document %d: kind %q", path, i, cm.Kind)
		}
		in.ConfigMaps = append(in.ConfigMaps, cm)
	}
	return in, nil
}

func configMap(name string) string {
	return fmt.Sprintf("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: %s\n  namespace: shop\n", name)
}

// syncBuffer is a log destination the source's goroutine and the test share.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

type running struct {
	src     *Source
	changes chan struct{}
	logs    *syncBuffer
	reg     *prometheus.Registry
}

// start runs a source over dir until the test ends.
func start(t *testing.T, dir string) *running {
	t.Helper()
	return startWithResync(t, dir, 0)
}

// runUntilCleanup runs src until tb ends, signalling each change on
// changes when there is room; the cleanup cancels Run and waits for it.
// The returned channel carries Run's error should it end before.
func runUntilCleanup(tb testing.TB, src *Source, changes chan struct{}) <-chan error {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- src.Run(ctx, func() {
			select {
			case changes <- struct{}{}:
			default:
			}
		})
	}()
	tb.Cleanup(func() {
		cancel()
		select {
		case err := <-done:
			if err != nil {
				tb.Errorf("Run: %v", err)
			}
		case <-time.After(5 * time.Second):
			tb.Error("Run did not return within 5s of cancel")
		}
	})
	return done
}

func startWithResync(t *testing.T, dir string, resync time.Duration) *running {
	t.Helper()
	return startWith(t, Options{Dir: dir, Parse: parseConfigMaps, Resync: resync}, 5*time.Second)
}

// startWith runs a source of opts (its registry and logger the test's)
// until cleanup, once it has synced within syncWithin.
func startWith(t *testing.T, opts Options, syncWithin time.Duration) *running {
	t.Helper()
	r := &running{changes: make(chan struct{}, 64), logs: &syncBuffer{}, reg: prometheus.NewRegistry()}
	opts.Registerer, opts.Logger = r.reg, slog.New(slog.NewTextHandler(r.logs, nil))
	src, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	r.src = src
	done := runUntilCleanup(t, src, r.changes)
	select {
	case <-src.Synced():
	case err := <-done:
		t.Fatalf("Run ended before sync: %v", err)
	case <-time.After(syncWithin):
		t.Fatalf("not synced within %s", syncWithin)
	}
	return r
}

// names lists the ConfigMaps the source currently serves.
func (r *running) names() []string {
	var out []string
	for _, cm := range r.src.Inputs().ConfigMaps {
		out = append(out, cm.Name)
	}
	slices.Sort(out)
	return out
}

// waitNames waits (at most 5s) until the served ConfigMaps are want.
func (r *running) waitNames(t *testing.T, want ...string) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		if slices.Equal(r.names(), want) {
			return
		}
		select {
		case <-r.changes:
		case <-time.After(20 * time.Millisecond):
		}
	}
	t.Fatalf("served ConfigMaps = %v, want %v\nlogs:\n%s", r.names(), want, r.logs)
}

func write(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestSourceFollowsEditsCreatesAndDeletes(t *testing.T) {
	dir := t.TempDir()
	write(t, filepath.Join(dir, "a.yaml"), configMap("a"))
	write(t, filepath.Join(dir, "ca.crt"), "not a manifest")
	write(t, filepath.Join(dir, ".a.yaml.swp"), "editor swap file")
	r := start(t, dir)
	r.waitNames(t, "a")

	write(t, filepath.Join(dir, "a.yaml"), configMap("a")+"---\n"+configMap("a2"))
	r.waitNames(t, "a", "a2")

	if err := os.Mkdir(filepath.Join(dir, "more"), 0o755); err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(dir, "more", "b.json"), `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"b","namespace":"shop"}}`)
	r.waitNames(t, "a", "a2", "b")
	write(t, filepath.Join(dir, "more", "c.yml"), configMap("c"))
	r.waitNames(t, "a", "a2", "b", "c")

	if err := os.Remove(filepath.Join(dir, "a.yaml")); err != nil {
		t.Fatal(err)
	}
	r.waitNames(t, "b", "c")
}

func TestSourceKeepsLastGoodObjectsOfABrokenFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "a.yaml")
	write(t, path, configMap("a"))
	write(t, filepath.Join(dir, "b.yaml"), configMap("b"))
	r := start(t, dir)
	r.waitNames(t, "a", "b")
	before := r.src.Inputs()

	write(t, path, "kind: ConfigMap\nmetadata: [not, a, map\n")
	write(t, filepath.Join(dir, "b.yaml"), configMap("b")+"---\n"+configMap("b2"))
	r.waitNames(t, "a", "b", "b2")
	if !strings.Contains(r.logs.String(), "file="+path) {
		t.Errorf("no log line naming %s:\n%s", path, r.logs)
	}
	if got := value(t, r.src.metrics.fileErrors); got != 1 {
		t.Errorf("tlsplane_source_file_errors_total = %v, want 1", got)
	}
	if got := value(t, r.src.metrics.failingFiles); got != 1 {
		t.Errorf("tlsplane_source_files_failing = %v, want 1", got)
	}
	if len(before.ConfigMaps) != 2 {
		t.Errorf("an earlier Inputs snapshot changed: %d ConfigMaps, want 2", len(before.ConfigMaps))
	}

	write(t, path, configMap("a-fixed"))
	r.waitNames(t, "a-fixed", "b", "b2")
	if got := value(t, r.src.metrics.failingFiles); got != 0 {
		t.Errorf("tlsplane_source_files_failing after the fix = %v, want 0", got)
	}
}

func TestSourceBrokenFileAtStartIsReportedAndSkipped(t *testing.T) {
	dir := t.TempDir()
	write(t, filepath.Join(dir, "bad.yaml"), "kind: Pod\n")
	write(t, filepath.Join(dir, "good.yaml"), configMap("good"))
	r := start(t, dir)
	r.waitNames(t, "good")
	if !strings.Contains(r.logs.String(), "bad.yaml") {
		t.Errorf("broken file not reported:\n%s", r.logs)
	}
}

func TestSourceDuplicateObjectKeptFromFirstFile(t *testing.T) {
	dir := t.TempDir()
	write(t, filepath.Join(dir, "a.yaml"), configMap("same")+"data:\n  from: a\n")
	write(t, filepath.Join(dir, "b.yaml"), configMap("same")+"data:\n  from: b\n")
	r := start(t, dir)
	cms := r.src.Inputs().ConfigMaps
	if len(cms) != 1 || cms[0].Data["from"] != "a" {
		t.Fatalf("ConfigMaps = %v, want one, from a.yaml", cms)
	}
	if !strings.Contains(r.logs.String(), "duplicate object") {
		t.Errorf("duplicate not reported:\n%s", r.logs)
	}
}

// swapConfigMapVolume writes files the way the kubelet updates a mounted
// ConfigMap: a new timestamped directory, then an atomic rename of ..data.
func swapConfigMapVolume(t *testing.T, dir, version string, files map[string]string) {
	t.Helper()
	ts := filepath.Join(dir, "..2026_11_22_"+version)
	if err := os.Mkdir(ts, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, content := range files {
		write(t, filepath.Join(ts, name), content)
	}
	old, _ := os.Readlink(filepath.Join(dir, "..data"))
	tmp := filepath.Join(dir, "..data_tmp")
	if err := os.Symlink(filepath.Base(ts), tmp); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, filepath.Join(dir, "..data")); err != nil {
		t.Fatal(err)
	}
	for name := range files {
		link := filepath.Join(dir, name)
		if _, err := os.Lstat(link); err != nil {
			if err := os.Symlink(filepath.Join("..data", name), link); err != nil {
				t.Fatal(err)
			}
		}
	}
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if _, kept := files[e.Name()]; !kept && !strings.HasPrefix(e.Name(), ".") {
			os.Remove(filepath.Join(dir, e.Name()))
		}
	}
	if old != "" {
		if err := os.RemoveAll(filepath.Join(dir, old)); err != nil {
			t.Fatal(err)
		}
	}
}

func TestSourceFollowsConfigMapVolumeSymlinkSwap(t *testing.T) {
	dir := t.TempDir()
	swapConfigMapVolume(t, dir, "1", map[string]string{"a.yaml": configMap("a1"), "b.yaml": configMap("b1")})
	r := start(t, dir)
	r.waitNames(t, "a1", "b1")

	swapConfigMapVolume(t, dir, "2", map[string]string{"a.yaml": configMap("a2"), "b.yaml": configMap("b1")})
	r.waitNames(t, "a2", "b1")

	swapConfigMapVolume(t, dir, "3", map[string]string{"a.yaml": configMap("a2")})
	r.waitNames(t, "a2")
	if strings.Contains(r.logs.String(), "level=ERROR") {
		t.Errorf("a swap produced errors:\n%s", r.logs)
	}
}

func TestSourceMissingDirectoryFailsRun(t *testing.T) {
	src, err := New(Options{Dir: filepath.Join(t.TempDir(), "absent"), Parse: parseConfigMaps})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	err = src.Run(ctx, func() {})
	if err == nil || !strings.Contains(err.Error(), "absent") {
		t.Fatalf("Run on a missing directory = %v, want an error naming it", err)
	}
}

// value reads a counter or gauge without the testutil package's extra deps.
func value(t *testing.T, m prometheus.Metric) float64 {
	t.Helper()
	var out dto.Metric
	if err := m.Write(&out); err != nil {
		t.Fatal(err)
	}
	if out.Counter != nil {
		return out.Counter.GetValue()
	}
	return out.Gauge.GetValue()
}

func TestSourceReadsTheQuickstart(t *testing.T) {
	src, err := New(Options{Dir: "../examples/quickstart", Parse: manifests.Parser(func(msg string) { t.Errorf("warning: %s", msg) })})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- src.Run(ctx, func() {}) }()
	defer func() { cancel(); <-done }()
	select {
	case <-src.Synced():
	case err := <-done:
		done <- err // for the deferred wait
		t.Fatal(err)
	case <-time.After(5 * time.Second):
		t.Fatal("not synced within 5s")
	}
	in := src.Inputs()
	if len(in.Policies) != 1 || len(in.Services) != 2 || len(in.EndpointSlices) != 2 || len(in.ConfigMaps) != 1 || len(in.Secrets) != 0 {
		t.Fatalf("quickstart: %d policies, %d services, %d slices, %d configmaps, %d secrets; want 1, 2, 2, 1, 0",
			len(in.Policies), len(in.Services), len(in.EndpointSlices), len(in.ConfigMaps), len(in.Secrets))
	}
}

func TestSourceKeepsObjectsWhileTheDirectoryIsGoneAndWatchesItAgain(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "manifests")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(dir, "a.yaml"), configMap("a"))
	r := startWithResync(t, dir, 100*time.Millisecond)
	r.waitNames(t, "a")

	if err := os.RemoveAll(dir); err != nil {
		t.Fatal(err)
	}
	time.Sleep(300 * time.Millisecond) // several resyncs with the directory gone
	if got := r.names(); !slices.Equal(got, []string{"a"}) {
		t.Fatalf("with the directory gone: %v, want the last good [a]", got)
	}
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(dir, "b.yaml"), configMap("b"))
	r.waitNames(t, "b")
	// Later edits are followed too.
	write(t, filepath.Join(dir, "c.yaml"), configMap("c"))
	r.waitNames(t, "b", "c")
}
