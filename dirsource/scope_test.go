package dirsource

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fsnotify/fsnotify"
)

// outsideLayout makes base/dir, the directory served, holding in.yaml
// (ConfigMap inside) and data/target.txt (ConfigMap linked-inside, not a
// manifest name: read only through a link), and base/out, outside it,
// holding out.yaml (ConfigMap outside) and dir/out.yaml (ConfigMap
// outside-deep). It returns base resolved through its symlinks, as
// messages name it.
func outsideLayout(t *testing.T) (base string) {
	t.Helper()
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	for path, name := range map[string]string{
		"dir/in.yaml":         "inside",
		"dir/data/target.txt": "linked-inside",
		"out/out.yaml":        "outside",
		"out/dir/out.yaml":    "outside-deep",
	} {
		if err := os.MkdirAll(filepath.Join(base, filepath.Dir(path)), 0o755); err != nil {
			t.Fatal(err)
		}
		write(t, filepath.Join(base, path), configMap(name))
	}
	return base
}

func link(t *testing.T, target, path string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(target, path); err != nil {
		t.Fatal(err)
	}
}

// A manifest whose symlinks lead outside the directory is refused: logged
// naming the file, the link and the flag, counted as a file error, its
// objects not served and nothing else lost. Links inside, a ConfigMap
// volume's among them, are followed, and so is a chain that passes
// outside and ends inside. Limits.FollowExternalLinks serves them all.
func TestSourceRefusesManifestsLinkedFromOutside(t *testing.T) {
	for _, c := range []struct {
		name string
		// link makes the case's links; dir is the path the source is given.
		link func(t *testing.T, base string) (dir string)
		// file, when refused, is the path refused, relative to dir, and
		// refused the log's error after it, BASE standing for base.
		file, refused string
		served        []string
		// followed is what the flag serves.
		followed []string
	}{
		{
			name: "a link to an outside file",
			link: func(t *testing.T, base string) string {
				link(t, "../out/out.yaml", filepath.Join(base, "dir/a.yaml"))
				return filepath.Join(base, "dir")
			},
			file:     "a.yaml",
			refused:  `symlink to \"../out/out.yaml\" leads outside the directory BASE/dir, to BASE/out/out.yaml: refused; --dir-follow-external-links reads it`,
			served:   []string{"inside"},
			followed: []string{"inside", "outside"},
		},
		{
			name: "a link through a link to an outside directory",
			link: func(t *testing.T, base string) string {
				link(t, "../../out/dir", filepath.Join(base, "dir/sub/ext"))
				link(t, "ext/out.yaml", filepath.Join(base, "dir/sub/a.yaml"))
				return filepath.Join(base, "dir")
			},
			file:     "sub/a.yaml",
			refused:  `symlink to \"ext/out.yaml\" leads outside the directory BASE/dir, to BASE/out/dir/out.yaml`,
			served:   []string{"inside"},
			followed: []string{"inside", "outside-deep"},
		},
		{
			name: "a chain that stays inside, then leaves",
			link: func(t *testing.T, base string) string {
				link(t, "../out/out.yaml", filepath.Join(base, "dir/.hop"))
				link(t, ".hop", filepath.Join(base, "dir/a.yaml"))
				return filepath.Join(base, "dir")
			},
			file:     "a.yaml",
			refused:  `symlink to \".hop\" leads outside the directory BASE/dir, to BASE/out/out.yaml`,
			served:   []string{"inside"},
			followed: []string{"inside", "outside"},
		},
		{
			name: "the directory given through a symlink, a link out of it",
			link: func(t *testing.T, base string) string {
				link(t, "../out/out.yaml", filepath.Join(base, "dir/a.yaml"))
				link(t, "dir", filepath.Join(base, "mounted"))
				return filepath.Join(base, "mounted")
			},
			file:     "a.yaml",
			refused:  `symlink to \"../out/out.yaml\" leads outside the directory BASE/dir, to BASE/out/out.yaml`,
			served:   []string{"inside"},
			followed: []string{"inside", "outside"},
		},
		{
			name: "a chain that leaves and comes back",
			link: func(t *testing.T, base string) string {
				link(t, "../dir/data/target.txt", filepath.Join(base, "out/back.txt"))
				link(t, "../out/back.txt", filepath.Join(base, "dir/a.yaml"))
				return filepath.Join(base, "dir")
			},
			served:   []string{"inside", "linked-inside"},
			followed: []string{"inside", "linked-inside"},
		},
		{
			name: "a ConfigMap volume's links, the volume given through a symlink",
			link: func(t *testing.T, base string) string {
				dir := filepath.Join(base, "dir")
				if err := os.Mkdir(filepath.Join(dir, "..2026_01_01_00_00_00.1"), 0o755); err != nil {
					t.Fatal(err)
				}
				write(t, filepath.Join(dir, "..2026_01_01_00_00_00.1/cm.yaml"), configMap("mounted"))
				link(t, "..2026_01_01_00_00_00.1", filepath.Join(dir, "..data"))
				link(t, "..data/cm.yaml", filepath.Join(dir, "cm.yaml"))
				link(t, "dir", filepath.Join(base, "mounted"))
				return filepath.Join(base, "mounted")
			},
			served:   []string{"inside", "mounted"},
			followed: []string{"inside", "mounted"},
		},
	} {
		t.Run(c.name, func(t *testing.T) {
			base := outsideLayout(t)
			dir := c.link(t, base)
			s := newStepper(t, dir)
			s.read(t, false, c.served...)
			wantErrors := 0.0
			if c.refused != "" {
				wantErrors = 1
				path := filepath.Join(dir, c.file)
				want := path + ": " + strings.ReplaceAll(c.refused, "BASE", base)
				if !strings.Contains(s.logs.String(), "file="+path) || !strings.Contains(s.logs.String(), want) {
					t.Errorf("no log line naming %s and %q:\n%s", path, want, s.logs)
				}
			}
			if got := s.errors(t); got != wantErrors {
				t.Errorf("tlsplane_source_file_errors_total = %v, want %v", got, wantErrors)
			}
			if got := value(t, s.src.metrics.failingFiles); got != wantErrors {
				t.Errorf("tlsplane_source_files_failing = %v, want %v", got, wantErrors)
			}

			follows := newStepper(t, dir)
			follows.src.opts.Limits.FollowExternalLinks = true
			follows.read(t, false, c.followed...)
			if got := follows.errors(t); got != 0 {
				t.Errorf("following external links: %v file errors, want 0\n%s", got, follows.logs)
			}
		})
	}
}

// A served link turned to lead outside, as a watch event or a resync finds
// it, is refused: what it served from inside stays, nothing from outside
// is served, and a link back inside is served again.
func TestSourceRefusesALinkTurnedOutside(t *testing.T) {
	base := outsideLayout(t)
	dir := filepath.Join(base, "dir")
	path := filepath.Join(dir, "a.yaml")
	link(t, "data/target.txt", path)
	r := start(t, dir)
	r.waitNames(t, "inside", "linked-inside")

	replaceWithSymlink(t, "../out/out.yaml", path)
	r.waitErrors(t, 1)
	want := `symlink to \"../out/out.yaml\" leads outside the directory ` + dir
	if !strings.Contains(r.logs.String(), "file="+path) || !strings.Contains(r.logs.String(), want) {
		t.Errorf("no log line naming %s and %q:\n%s", path, want, r.logs)
	}
	write(t, filepath.Join(dir, "in.yaml"), configMap("inside-2")) // read after the refusal
	r.waitNames(t, "inside-2", "linked-inside")

	write(t, filepath.Join(dir, "data/next.txt"), configMap("linked-again"))
	replaceWithSymlink(t, "data/next.txt", path)
	r.waitNames(t, "inside-2", "linked-again")
}

// The watches stay inside the directory: a symlinked directory, inside or
// out, is neither walked nor watched, with the flag or without.
func TestSourceWatchesNoDirectoryOutside(t *testing.T) {
	base := outsideLayout(t)
	dir := filepath.Join(base, "dir")
	link(t, "../out", filepath.Join(dir, "ext"))
	link(t, "../../out/dir", filepath.Join(dir, "data/ext"))
	for _, follow := range []bool{false, true} {
		watcher, err := fsnotify.NewWatcher()
		if err != nil {
			t.Fatal(err)
		}
		defer watcher.Close()
		s := newStepper(t, dir)
		s.src.opts.Limits.FollowExternalLinks = follow
		if _, _, err := s.src.rescan(watcher); err != nil {
			t.Fatal(err)
		}
		for _, w := range watcher.WatchList() {
			if rel, err := filepath.Rel(dir, w); err != nil || strings.HasPrefix(rel, "..") || strings.Contains(rel, "ext") {
				t.Errorf("following external links %v: watches %s, outside %s", follow, w, dir)
			}
		}
	}
}
