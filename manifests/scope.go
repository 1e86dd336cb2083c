package manifests

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// FollowExternalLinksFlag names the flag that lets a directory's symlinks
// lead to files outside it; the refusal names it.
const FollowExternalLinksFlag = "dir-follow-external-links"

// ReadFileIn reads the manifest file rel of the directory root (resolved
// through its own symlinks, as filepath.EvalSymlinks returns it), bounded
// as ReadFile is; shown names the file in messages. Unless
// FollowExternalLinks, it reads only a file inside root: symlinks are
// followed (a ConfigMap volume's `file -> ..data/file`, `..data ->
// ..2026_…`) when the file they lead to is inside root, and anything else
// is refused without being opened.
func (l Limits) ReadFileIn(root, rel, shown string) ([]byte, error) {
	f, err := l.openIn(root, rel, shown)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return l.readAll(f, shown)
}

// openIn opens rel through an os.Root, which resolves each link itself and
// refuses one that leaves root, so a link swapped between a check and the
// open cannot lead out.
func (l Limits) openIn(root, rel, shown string) (*os.File, error) {
	if l.FollowExternalLinks {
		return os.Open(filepath.Join(root, rel))
	}
	f, err := os.OpenInRoot(root, rel)
	if err == nil || errors.Is(err, fs.ErrNotExist) {
		return f, named(err, shown)
	}
	// os.Root refuses every absolute link and every chain that passes
	// outside, even one that ends inside: those are read when the file
	// they lead to is inside, by its resolved path, again through the
	// root.
	resolved, rerr := filepath.EvalSymlinks(filepath.Join(root, rel))
	if rerr != nil {
		return nil, named(rerr, shown) // dangling: fs.ErrNotExist, as os.Open says
	}
	inside, ok := within(root, resolved)
	if !ok {
		return nil, leadsOutside(root, rel, shown, resolved)
	}
	f, err = os.OpenInRoot(root, inside)
	return f, named(err, shown)
}

// within returns path relative to root, and whether it is inside root.
func within(root, path string) (string, bool) {
	rel, err := filepath.Rel(root, path)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return "", false
	}
	return rel, true
}

// leadsOutside is the refusal of rel, which resolves to path outside root:
// it names the file, the link and the flag.
func leadsOutside(root, rel, shown, path string) error {
	how := "a symlink on its path leads"
	if target, err := os.Readlink(filepath.Join(root, rel)); err == nil {
		how = fmt.Sprintf("symlink to %q leads", Excerpt(target))
	}
	return fmt.Errorf("%s: %s outside the directory %s, to %s: refused; --%s reads it",
		shown, how, root, Excerpt(path), FollowExternalLinksFlag)
}

// named puts shown in place of the relative path an os.Root's error names.
func named(err error, shown string) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return &fs.PathError{Op: "open", Path: shown, Err: pe.Err}
	}
	return err
}
