package faults

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tlsplane/tlsplane/e2e/harness"
)

// mountTmpfs mounts a tmpfs of size at dir, or returns false when this
// host does not let the test mount (not root, no CAP_SYS_ADMIN).
func mountTmpfs(t *testing.T, dir, size string) bool {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size="+size, "tmpfs", dir).CombinedOutput(); err != nil {
		// CI runs as root and must prove the disk-full cases, not skip them.
		if os.Getenv("CI") == "true" {
			t.Fatalf("no tmpfs under CI=true (%v: %s): the disk-full cases cannot run", err, bytes.TrimSpace(out))
		}
		t.Logf("no tmpfs (%v: %s): the disk-full case is skipped", err, bytes.TrimSpace(out))
		return false
	}
	// Registered before any process starts, so it runs after they stop.
	t.Cleanup(func() {
		if out, err := exec.Command("umount", dir).CombinedOutput(); err != nil {
			t.Errorf("umount %s: %v: %s", dir, err, out)
		}
	})
	return true
}

// fillDisk writes to path until the filesystem is full; it fails the
// test if it is not full after max bytes.
func fillDisk(t *testing.T, path string, max int) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	chunk := make([]byte, 4096)
	for written := 0; written < max; written += len(chunk) {
		if _, err := f.Write(chunk); err != nil {
			if errors.Is(err, syscall.ENOSPC) {
				return
			}
			t.Fatal(err)
		}
	}
	t.Fatalf("%s: filesystem not full after %d bytes", path, max)
}

// The directory's files go bad in the ways a disk and an operator make
// them bad: errors are reported, and Envoy keeps the last good state.
func TestUnreadableOrFullDir(t *testing.T) {
	e := newEnv(t, "")
	tmpfsDir := filepath.Join(e.root, "tmpfs")
	if mountTmpfs(t, tmpfsDir, "256k") {
		e.manifestDir = tmpfsDir
	}
	steadyPort, victimPort := e.startBackend(t, "steady"), e.startBackend(t, "victim")
	steadyFile, victimFile := filepath.Join(e.manifestDir, "steady.yaml"), filepath.Join(e.manifestDir, "victim.yaml")
	good := manifest(t, backendObjects("victim", victimPort, e.pki.caPEM, hostMain))
	harness.WriteAtomic(t, steadyFile, manifest(t, backendObjects("steady", steadyPort, e.pki.caPEM, hostMain)))
	harness.WriteAtomic(t, victimFile, good)
	e.startTLSPlane(t)
	e.startEnvoy(t)
	steady, victim := clusterName("steady"), clusterName("victim")
	e.waitServed(t, victim, "victim", hostMain)

	// lastGoodKept: tlsplane counted a file error, Envoy still serves the
	// victim as before, and a change elsewhere still goes through.
	step := 0
	lastGoodKept := func(t *testing.T, errorsBefore float64) {
		t.Helper()
		step++
		err := eventually(applyTimeout, 100*time.Millisecond, func() error {
			if e.metric(t, "tlsplane_source_file_errors_total") <= errorsBefore {
				return errString("no file error counted")
			}
			return nil
		})
		if err != nil {
			t.Errorf("%v\n--- tlsplane log:\n%s", err, e.tlsplane.logTail(10))
		}
		sni := hostMain
		if step%2 == 1 {
			sni = hostOther
		}
		harness.WriteAtomic(t, steadyFile, manifest(t, backendObjects("steady", steadyPort, e.pki.caPEM, sni)))
		e.waitServed(t, steady, "steady", sni)
		if got, err := e.request(victim); err != nil || got.SNI != hostMain {
			t.Errorf("victim after the fault: %+v, %v; want its last good state (SNI %s)", got, err, hostMain)
		}
		if n := e.metric(t, "tlsplane_source_files_failing"); n < 1 {
			t.Errorf("tlsplane_source_files_failing = %v, want the bad file counted", n)
		}
	}
	restore := func(t *testing.T) {
		t.Helper()
		if err := os.RemoveAll(victimFile); err != nil {
			t.Fatal(err)
		}
		harness.WriteAtomic(t, victimFile, good)
		e.waitServed(t, victim, "victim", hostMain)
	}

	faults := []struct {
		name  string
		apply func(t *testing.T)
	}{
		{"a read error (EIO)", func(t *testing.T) {
			// /proc/self/mem is a regular file whose first page is unmapped:
			// reading it fails with EIO, even for root, where chmod 000
			// would not stop a read.
			link := filepath.Join(e.manifestDir, ".link")
			if err := os.Symlink("/proc/self/mem", link); err != nil {
				t.Fatal(err)
			}
			if err := os.Rename(link, victimFile); err != nil {
				t.Fatal(err)
			}
		}},
		{"dangling symlink", func(t *testing.T) {
			link := filepath.Join(e.manifestDir, ".link")
			if err := os.Symlink(filepath.Join(e.manifestDir, "missing", "victim.yaml"), link); err != nil {
				t.Fatal(err)
			}
			if err := os.Rename(link, victimFile); err != nil {
				t.Fatal(err)
			}
		}},
		{"replaced by a directory", func(t *testing.T) {
			if err := os.Remove(victimFile); err != nil {
				t.Fatal(err)
			}
			if err := os.Mkdir(victimFile, 0o755); err != nil {
				t.Fatal(err)
			}
		}},
		{"truncated mid-document", func(t *testing.T) {
			if err := os.WriteFile(victimFile, good[:len(good)/3], 0o644); err != nil {
				t.Fatal(err)
			}
		}},
	}
	for _, f := range faults {
		t.Run(f.name, func(t *testing.T) {
			before := e.metric(t, "tlsplane_source_file_errors_total")
			f.apply(t)
			lastGoodKept(t, before)
			restore(t)
		})
	}

	t.Run("disk full: a rewrite by rename fails and changes nothing", func(t *testing.T) {
		if e.manifestDir != tmpfsDir {
			t.Skip("no tmpfs")
		}
		filler := filepath.Join(e.manifestDir, ".filler")
		fillDisk(t, filler, 1<<20)
		defer os.Remove(filler)
		// The writer's temporary file is hidden, so tlsplane never reads
		// the part that fit; the rename never happens.
		tmp := filepath.Join(e.manifestDir, ".victim.yaml.tmp")
		err := os.WriteFile(tmp, padded(t, victimPort, e.pki.caPEM), 0o644)
		if !errors.Is(err, syscall.ENOSPC) {
			t.Fatalf("write on a full disk: %v, want ENOSPC", err)
		}
		time.Sleep(time.Second) // past the debounce
		if got, err := e.request(victim); err != nil || got.SNI != hostMain {
			t.Errorf("victim on a full disk: %+v, %v; want SNI %s", got, err, hostMain)
		}
		os.Remove(tmp)
	})

	t.Run("disk full during an in-place rewrite", func(t *testing.T) {
		if e.manifestDir != tmpfsDir {
			t.Skip("no tmpfs")
		}
		filler := filepath.Join(e.manifestDir, ".filler")
		before := e.metric(t, "tlsplane_source_file_errors_total")
		fillDisk(t, filler, 1<<20)
		f, err := os.OpenFile(victimFile, os.O_WRONLY|os.O_TRUNC, 0)
		if err != nil {
			t.Fatal(err)
		}
		_, werr := f.Write(padded(t, victimPort, e.pki.caPEM))
		f.Close()
		if !errors.Is(werr, syscall.ENOSPC) {
			t.Fatalf("rewrite on a full disk: %v, want ENOSPC", werr)
		}
		if err := os.Remove(filler); err != nil { // room for lastGoodKept's edit
			t.Fatal(err)
		}
		lastGoodKept(t, before)
		restore(t)
	})
}

// padded is the victim's manifest, far larger than a full disk's room,
// padded inside the first document so a cut falls there.
func padded(t *testing.T, port int, caPEM []byte) []byte {
	objs := backendObjects("victim", port, caPEM, hostOther)
	objs[0]["metadata"].(object)["annotations"] = object{"padding": strings.Repeat("x", 64<<10)}
	return manifest(t, objs)
}
