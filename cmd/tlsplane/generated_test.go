package main

import (
	"bufio"
	"bytes"
	"context"
	"flag"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/tlsplane/tlsplane/dirsource"
	"github.com/tlsplane/tlsplane/manifests"
	"github.com/tlsplane/tlsplane/perf/world"
)

// writeGeneratedManifest writes what `helm template` or a GitOps tool
// renders for n Services as one file: a GatewayClass and a Gateway, then
// for each Service (in 50 namespaces) its CA ConfigMap (a P-256 CA, as
// cert-manager issues), BackendTLSPolicy, EndpointSlice and HTTPRoute
// behind that Gateway, each document under helm's `# Source:` comment.
// It returns the bytes written.
func writeGeneratedManifest(w io.Writer, n int, caPEM string) (int64, error) {
	bw := bufio.NewWriterSize(w, 1<<20)
	counted := &countingWriter{w: bw}
	if err := world.WriteGateway(counted); err != nil {
		return counted.n, err
	}
	if err := world.WriteServices(counted, 0, n, caPEM, 8443); err != nil {
		return counted.n, err
	}
	if err := bw.Flush(); err != nil {
		return 0, err
	}
	return counted.n, counted.err
}

// heapInUse is the heap in use after a collection: what is held.
func heapInUse() int64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return int64(m.HeapInuse)
}

type countingWriter struct {
	w   io.Writer
	n   int64
	err error
}

func (c *countingWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	if c.err == nil {
		c.err = err
	}
	return n, err
}

// TestGeneratedManifestOfTenThousandServices: the 19 MB file of
// 10,000 Services with their Gateway routes, over the 16 MiB a file could
// be before, is read with the default limits by `tlsplane translate`'s
// reader and by the directory source; the defaults also take the same
// file of 100,000 Services (its size measured, not read).
func TestGeneratedManifestOfTenThousandServices(t *testing.T) {
	if testing.Short() {
		t.Skip("writes and reads a 20 MB manifest of 10,000 Services; not with -short")
	}
	ca := selfSignedCA(t, time.Now().Add(365*24*time.Hour))
	large, err := writeGeneratedManifest(io.Discard, 100000, ca)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("100,000 Services: %d bytes (%s)", large, manifests.Bytes(large))
	if large > manifests.DefaultLimits.FileBytes || large > manifests.DefaultLimits.TotalBytes {
		t.Errorf("100,000 Services are %s, over the default limits %+v", manifests.Bytes(large), manifests.DefaultLimits)
	}

	dir := t.TempDir()
	path := filepath.Join(dir, "shop.yaml")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	size, err := writeGeneratedManifest(f, 10000, ca)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("10,000 Services: %d bytes (%s)", size, manifests.Bytes(size))
	if size <= 16<<20 {
		t.Fatalf("10,000 Services are %s, not over the 16 MiB the issue's file was refused at", manifests.Bytes(size))
	}

	// translate's reader, with the flags' defaults: the whole command
	// also renders every resource of 10,000 Services, which costs far
	// more than reading them (see docs in the report of issue 24).
	t.Run("translate", func(t *testing.T) {
		fs := flag.NewFlagSet("translate", flag.ContinueOnError)
		limits := registerDirLimits(fs)
		if err := fs.Parse(nil); err != nil {
			t.Fatal(err)
		}
		before := heapInUse()
		start := time.Now()
		in, refused, err := readManifests([]string{path}, *limits, func(msg string) { t.Errorf("warning: %s", msg) })
		took := time.Since(start)
		t.Logf("translate's reader: %v; heap in use %d MiB more after it", took.Round(time.Millisecond), (heapInUse()-before)>>20)
		if err != nil {
			t.Fatal(err)
		}
		if len(refused) > 0 {
			t.Fatalf("%d objects of the generated manifest refused, the first: %v", len(refused), refused[0])
		}
		if len(in.Services) != 10000 || len(in.HTTPRoutes) != 10000 || len(in.Policies) != 10000 {
			t.Errorf("read %d Services, %d HTTPRoutes, %d policies; want 10,000 each", len(in.Services), len(in.HTTPRoutes), len(in.Policies))
		}

		// The 16 MiB a file was bounded by refuses it, and says how to
		// read it.
		out, err := tlsplaneCommand(t, "translate", "--dir-max-file-bytes=16Mi", path).CombinedOutput()
		want := " MiB is over --dir-max-file-bytes (16 MiB); raise it to read this file"
		if err == nil || !strings.Contains(string(out), path+": 19.") || !strings.Contains(string(out), want) {
			t.Errorf("translate --dir-max-file-bytes=16Mi: exit %v, output %.500q; want %q", err, out, want)
		}
	})

	t.Run("dirsource", func(t *testing.T) {
		before := heapInUse()
		src, err := dirsource.New(dirsource.Options{Dir: dir, Parse: manifests.Parser(func(msg string) { t.Errorf("warning: %s", msg) })})
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		start := time.Now()
		go func() { done <- src.Run(ctx, func() {}) }()
		defer func() { cancel(); <-done }()
		select {
		case <-src.Synced():
		case err := <-done:
			t.Fatalf("source stopped: %v", err)
		case <-time.After(2 * time.Minute):
			t.Fatal("not synced within 2 minutes")
		}
		took := time.Since(start)
		in := src.Inputs()
		t.Logf("directory source: read in %v; heap in use %d MiB more after it", took.Round(time.Millisecond), (heapInUse()-before)>>20)
		if len(in.Services) != 10000 || len(in.HTTPRoutes) != 10000 || len(in.Policies) != 10000 {
			t.Errorf("served %d Services, %d HTTPRoutes, %d policies; want 10,000 each", len(in.Services), len(in.HTTPRoutes), len(in.Policies))
		}
	})
	// The whole of serve: read, translated and published, in a process
	// of its own, so its peak memory is measured.
	t.Run("serve", func(t *testing.T) {
		p := startServeProcess(t, dir)
		start := time.Now()
		for deadline := start.Add(3 * time.Minute); ; time.Sleep(100 * time.Millisecond) {
			if code, _ := p.get("/readyz"); code == 200 {
				break
			}
			select {
			case <-p.exited:
				t.Fatalf("serve exited: %v\n%.3000s", p.waitErr, p.logs.String())
			default:
			}
			if time.Now().After(deadline) {
				t.Fatalf("serve not ready within 3 minutes; logs:\n%.3000s", p.logs.String())
			}
		}
		took := time.Since(start)
		t.Logf("serve: ready in %v, peak RSS %d MiB", took.Round(time.Millisecond), peakRSS(t, p.cmd.Process.Pid)>>20)
		// The snapshot of 10,000 clusters takes longer than p.get allows.
		resp, err := (&http.Client{Timeout: time.Minute}).Get("http://" + p.admin + "/debug/snapshot?node=edge")
		if err != nil {
			t.Fatal(err)
		}
		body, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil || resp.StatusCode != 200 || !bytes.Contains(body, []byte("team-49/svc-9999/443")) {
			t.Errorf("/debug/snapshot = %d (%d bytes, %v), want svc-9999's cluster served", resp.StatusCode, len(body), err)
		}
		if strings.Contains(p.logs.String(), `"level":"ERROR"`) {
			t.Errorf("serve logged errors:\n%.3000s", p.logs.String())
		}
	})
}
