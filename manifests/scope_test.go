package manifests

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/tlsplane/tlsplane/translator"
)

func secretManifest(name string) string {
	return "apiVersion: v1\nkind: Secret\nmetadata: {name: " + name + ", namespace: shop}\nstringData: {token: " + name + "}\n"
}

// linkedDir is a layout for the scope tests: base/dir is the directory
// read, holding in.yaml (Secret inside), sub/in.yaml (Secret deeper) and
// data/target.txt (Secret linked-inside, read only through a link: it is
// not named as a manifest); base/out holds secret.yaml (Secret outside)
// and dir/secret.yaml (Secret outside-deep). link makes a case's links.
func linkedDir(t *testing.T, link func(base, dir string)) (base, dir string) {
	t.Helper()
	base, err := filepath.EvalSymlinks(t.TempDir()) // as messages name it
	if err != nil {
		t.Fatal(err)
	}
	dir = filepath.Join(base, "dir")
	for path, content := range map[string]string{
		"dir/in.yaml":         secretManifest("inside"),
		"dir/sub/in.yaml":     secretManifest("deeper"),
		"dir/data/target.txt": secretManifest("linked-inside"),
		"out/secret.yaml":     secretManifest("outside"),
		"out/dir/secret.yaml": secretManifest("outside-deep"),
	} {
		path = filepath.Join(base, path)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	link(base, dir)
	return base, dir
}

func symlink(t *testing.T, target, path string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(target, path); err != nil {
		t.Fatal(err)
	}
}

// A directory's files are read only from inside it: a symlink that leads
// outside (at any depth, through any chain) is refused, naming the file,
// the link and the flag; links inside it, a ConfigMap volume's included,
// are followed, and so is a chain that passes outside and ends inside.
// --dir-follow-external-links reads them all.
func TestReadRefusesLinksOutOfTheDirectory(t *testing.T) {
	for _, c := range []struct {
		name string
		link func(t *testing.T, base, dir string)
		// refused is the refusal's text after the file's path, with
		// BASE for the layout's directory; empty when read.
		refused string
		// served are the Secrets read when not refused (and with the
		// flag, when the file is).
		served []string
	}{
		{
			name: "a link to an outside file",
			link: func(t *testing.T, base, dir string) { symlink(t, "../out/secret.yaml", filepath.Join(dir, "a.yaml")) },
			refused: `a.yaml: symlink to "../out/secret.yaml" leads outside the directory BASE/dir, to BASE/out/secret.yaml: ` +
				"refused; --dir-follow-external-links reads it",
			served: []string{"deeper", "inside", "outside"},
		},
		{
			name: "an absolute link to an outside file, in a subdirectory",
			link: func(t *testing.T, base, dir string) {
				symlink(t, filepath.Join(base, "out/secret.yaml"), filepath.Join(dir, "sub/a.yaml"))
			},
			refused: `sub/a.yaml: symlink to "BASE/out/secret.yaml" leads outside the directory BASE/dir, to BASE/out/secret.yaml`,
			served:  []string{"deeper", "inside", "outside"},
		},
		{
			name: "a link through a link to an outside directory",
			link: func(t *testing.T, base, dir string) {
				symlink(t, "../out/dir", filepath.Join(dir, "ext"))
				symlink(t, "ext/secret.yaml", filepath.Join(dir, "a.yaml"))
			},
			refused: `a.yaml: symlink to "ext/secret.yaml" leads outside the directory BASE/dir, to BASE/out/dir/secret.yaml`,
			served:  []string{"deeper", "inside", "outside-deep"},
		},
		{
			name: "a chain that stays inside, then leaves",
			link: func(t *testing.T, base, dir string) {
				symlink(t, "../../out/secret.yaml", filepath.Join(dir, "sub/.hop"))
				symlink(t, "sub/.hop", filepath.Join(dir, "a.yaml"))
			},
			refused: `a.yaml: symlink to "sub/.hop" leads outside the directory BASE/dir, to BASE/out/secret.yaml`,
			served:  []string{"deeper", "inside", "outside"},
		},
		{
			name: "a link through /proc/self/root",
			link: func(t *testing.T, base, dir string) {
				symlink(t, "/proc/self/root"+base+"/out/secret.yaml", filepath.Join(dir, "a.yaml"))
			},
			refused: `a.yaml: symlink to "/proc/self/rootBASE/out/secret.yaml" leads outside the directory BASE/dir, to BASE/out/secret.yaml`,
			served:  []string{"deeper", "inside", "outside"},
		},
		{
			name: "a chain that leaves and comes back",
			link: func(t *testing.T, base, dir string) {
				symlink(t, "../dir/data/target.txt", filepath.Join(base, "out/back.yaml"))
				symlink(t, "../out/back.yaml", filepath.Join(dir, "a.yaml"))
			},
			served: []string{"deeper", "inside", "linked-inside"},
		},
		{
			name: "an absolute link inside",
			link: func(t *testing.T, base, dir string) {
				symlink(t, filepath.Join(dir, "data/target.txt"), filepath.Join(dir, "a.yaml"))
			},
			served: []string{"deeper", "inside", "linked-inside"},
		},
		{
			name: "a ConfigMap volume's links",
			link: func(t *testing.T, base, dir string) {
				vol := filepath.Join(dir, "vol")
				if err := os.MkdirAll(filepath.Join(vol, "..2026_01_01_00_00_00.1"), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(filepath.Join(vol, "..2026_01_01_00_00_00.1/cm.yaml"), []byte(secretManifest("mounted")), 0o644); err != nil {
					t.Fatal(err)
				}
				symlink(t, "..2026_01_01_00_00_00.1", filepath.Join(vol, "..data"))
				symlink(t, "..data/cm.yaml", filepath.Join(vol, "cm.yaml"))
			},
			served: []string{"deeper", "inside", "mounted"},
		},
	} {
		t.Run(c.name, func(t *testing.T) {
			base, dir := linkedDir(t, func(base, dir string) { c.link(t, base, dir) })
			// Named as a mounted path may be: through a symlink.
			mounted := filepath.Join(base, "mounted")
			symlink(t, "dir", mounted)
			for _, given := range []string{dir, mounted} {
				in, err := Read([]string{given}, nil)
				if c.refused != "" {
					want := given + "/" + strings.ReplaceAll(c.refused, "BASE", base)
					if err == nil || !strings.Contains(err.Error(), want) {
						t.Errorf("Read(%s) = %v, want an error %q", given, err, want)
					}
				} else if got := secretNames(in); err != nil || !slices.Equal(got, c.served) {
					t.Errorf("Read(%s) = %v, %v; want %v", given, got, err, c.served)
				}
				in, err = Limits{FollowExternalLinks: true}.Read([]string{given}, nil)
				if got := secretNames(in); err != nil || !slices.Equal(got, c.served) {
					t.Errorf("Read(%s) following external links = %v, %v; want %v", given, got, err, c.served)
				}
			}
		})
	}
}

// A file named on its own is read wherever its links lead: it was chosen.
func TestReadFollowsAFileNamedOnItsOwn(t *testing.T) {
	_, dir := linkedDir(t, func(base, dir string) {
		symlink(t, "../out/secret.yaml", filepath.Join(dir, "a.yaml"))
	})
	in, err := Read([]string{filepath.Join(dir, "a.yaml")}, nil)
	if got := secretNames(in); err != nil || !slices.Equal(got, []string{"outside"}) {
		t.Errorf("Read(a.yaml) = %v, %v; want [outside]", got, err)
	}
}

// secretNames lists the Secrets read, sorted.
func secretNames(in translator.Inputs) []string {
	var names []string
	for _, s := range in.Secrets {
		names = append(names, s.Name)
	}
	slices.Sort(names)
	return names
}
