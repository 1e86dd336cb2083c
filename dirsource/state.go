package dirsource

import (
	"crypto/sha256"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/fsnotify/fsnotify"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/tlsplane/tlsplane/manifests"
)

// suspectRereads bounds the extra reads, settle apart, that a file found in
// a state writers pass through gets before that state is believed: emptied
// (an in-place rewrite truncates before it writes) or a dangling symlink (a
// ConfigMap volume's removed keys dangle between the kubelet's ..data swap
// and its removal of their links). The objects stay served meanwhile.
const suspectRereads = 2

// fileState is what the source remembers of one manifest path.
type fileState struct {
	// sum is the hash of the content last read, good or bad, so an
	// unchanged broken file is reported once, not on every event. It is
	// zero while the path cannot be read, so it is parsed when it can.
	sum [sha256.Size]byte
	// objects are the last good objects: kept while the file is broken,
	// unreadable, a dangling symlink or replaced by a directory.
	objects map[objectKey]metav1.Object
	// size is the length of the content objects were read from: what
	// the file counts towards Limits.TotalBytes.
	size int64
	// failing is set while the current content cannot be read or parsed.
	failing bool
	// problem is the error last reported, so an unchanged unreadable path
	// is reported once, not on every event.
	problem string
	// suspect counts consecutive reads that found the path emptied or
	// dangling; see suspectRereads.
	suspect int
	// replaced is set while the path is a directory: its kept objects
	// yield to the manifests inside it.
	replaced bool
	// link is set while the path is a symlink: its content can change with
	// no event naming it (its target, or a ConfigMap volume's ..data,
	// changed), so every read after an event reads it again.
	link bool
	// stamp is the file's metadata when its content was read, valid when
	// stamped: the periodic walk skips a file whose stamp holds.
	stamp   stamp
	stamped bool
	// seen is the number of the last periodic walk that listed the path;
	// a path the last walk did not list is read again (gone, perhaps).
	seen uint64
}

// pass is what one read of the directory, whole or in part, did.
type pass struct {
	// touched are the keys whose served object may have changed.
	touched []objectKey
	// suspects are paths to read again after settle before believing them.
	suspects []string
}

// rescan reads every manifest file whose content changed since the last
// read, forgets deleted files, and serves what changed. It reports whether
// anything served did, and whether a path is suspect and should be read
// again after settle (s.suspect names them). Adding watches for new
// subdirectories happens here too, since a walk finds them.
func (s *Source) rescan(watcher *fsnotify.Watcher) (changed, again bool, err error) {
	root, err := filepath.EvalSymlinks(s.opts.Dir)
	if err != nil {
		return false, false, fmt.Errorf("directory source %s: %w", s.opts.Dir, err)
	}
	s.rewatchRoot(watcher)
	list, err := listManifests(root)
	if err != nil {
		return false, false, fmt.Errorf("directory source %s: %w", s.opts.Dir, err)
	}
	s.root = root
	s.watchDirs(watcher, root, list.dirs)

	var p pass
	// Deletions first: the bytes they held make room, under
	// Limits.TotalBytes, for the files read next (a file split in two, or
	// two merged, in one commit).
	listed := make(map[string]bool, len(list.files)+len(list.unusable)+len(list.dirs))
	for _, rel := range list.files {
		listed[rel] = true
	}
	for rel := range list.unusable {
		listed[rel] = true
	}
	for _, dir := range list.dirs {
		if rel, err := filepath.Rel(root, dir); err == nil {
			listed[rel] = true
		}
	}
	for _, rel := range slices.Sorted(maps.Keys(s.files)) {
		if !listed[rel] {
			s.log.Info("manifest file removed; its objects are withdrawn", "file", filepath.Join(s.opts.Dir, rel))
			p.touched = append(p.touched, s.forget(rel)...)
		}
	}
	present := make(map[string]bool, len(list.files))
	var changedFiles []string
	for _, rel := range list.files {
		if st := s.files[rel]; st != nil && st.unchanged(filepath.Join(root, rel), list.links[rel]) {
			present[rel] = true
			continue
		}
		changedFiles = append(changedFiles, rel)
	}
	ahead, stop := s.readAhead(root, changedFiles)
	defer stop()
	for _, rel := range changedFiles {
		if gone := s.readPathFrom(&p, root, rel, list.links[rel], ahead(rel)); gone {
			continue // treated as deleted
		}
		present[rel] = true
	}
	for _, rel := range slices.Sorted(maps.Keys(list.unusable)) {
		present[rel] = true
		s.unusable(&p, rel, list.links[rel], list.unusable[rel])
	}
	for _, dir := range list.dirs {
		rel, err := filepath.Rel(root, dir)
		if err != nil || s.files[rel] == nil {
			continue
		}
		present[rel] = true
		s.replacedByDirectory(&p, rel)
	}
	for _, rel := range slices.Sorted(maps.Keys(s.files)) {
		if !present[rel] {
			s.log.Info("manifest file removed; its objects are withdrawn", "file", filepath.Join(s.opts.Dir, rel))
			p.touched = append(p.touched, s.forget(rel)...)
		}
	}
	return s.finish(p), len(p.suspects) > 0, nil
}

// reread reads the paths events named, and every symlinked manifest; a
// file no event named did not change. A path that is or was a directory
// needs a walk: reread then reads the whole directory instead.
func (s *Source) reread(watcher *fsnotify.Watcher, named []string) (changed, again bool, err error) {
	root := s.root
	paths := map[string]bool{}
	for _, rel := range named {
		paths[rel] = true
	}
	for rel := range s.links {
		paths[rel] = true
	}
	type found struct {
		rel  string
		info fs.FileInfo // nil when no entry is left
	}
	var reads []found
	for _, rel := range slices.Sorted(maps.Keys(paths)) {
		path := filepath.Join(root, rel)
		info, err := os.Lstat(path)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			if st := s.files[rel]; st != nil && st.replaced {
				return s.rescan(watcher) // the directory that replaced a file went
			}
			info = nil
		case err != nil, info.IsDir(), s.watched[path]:
			return s.rescan(watcher) // a new directory, or a changed one
		case s.files[rel] != nil && s.files[rel].replaced:
			return s.rescan(watcher) // a directory became a file again
		case !manifests.IsManifest(filepath.Base(rel)):
			continue
		}
		reads = append(reads, found{rel, info})
	}
	// Deletions first, as in rescan: what they held makes room.
	slices.SortStableFunc(reads, func(a, b found) int {
		switch {
		case a.info == nil && b.info != nil:
			return -1
		case a.info != nil && b.info == nil:
			return 1
		}
		return 0
	})
	var p pass
	for _, f := range reads {
		if f.info != nil {
			path, typ := filepath.Join(root, f.rel), f.info.Mode().Type()
			link := typ&fs.ModeSymlink != 0
			if perr := notAFile(path, typ); perr != nil {
				s.unusable(&p, f.rel, link, perr)
				continue
			}
			if gone := s.readPath(&p, root, f.rel, link); !gone {
				continue
			}
		}
		if s.files[f.rel] != nil {
			s.log.Info("manifest file removed; its objects are withdrawn", "file", filepath.Join(s.opts.Dir, f.rel))
			p.touched = append(p.touched, s.forget(f.rel)...)
		}
	}
	return s.finish(p), len(p.suspects) > 0, nil
}

// finish serves what a pass touched and refreshes the gauges.
func (s *Source) finish(p pass) bool {
	s.suspect = p.suspects
	s.countFiles()
	return s.resolve(p.touched)
}

// readPath reads the manifest file at rel. It reports gone when no entry
// is left at rel: a deletion.
func (s *Source) readPath(p *pass, root, rel string, link bool) (gone bool) {
	return s.readPathFrom(p, root, rel, link, nil)
}

// readPathFrom is readPath of a file read (and parsed) ahead, or, when
// ahead is nil, read now.
func (s *Source) readPathFrom(p *pass, root, rel string, link bool, ahead *read) (gone bool) {
	shown := filepath.Join(s.opts.Dir, rel)
	if ahead == nil {
		// Stamped before the read: a write between the two leaves the
		// file a newer stamp than the content read, which costs one more
		// read later, where the other order would hide the write from
		// the periodic walk.
		ahead = &read{}
		ahead.stamped, ahead.stampOK = stampOf(filepath.Join(root, rel), time.Now())
		ahead.data, ahead.err = s.opts.Limits.ReadFileIn(root, rel, shown)
	}
	stamped, stampOK, data, err := ahead.stamped, ahead.stampOK, ahead.data, ahead.err
	if errors.Is(err, fs.ErrNotExist) {
		info, lerr := os.Lstat(filepath.Join(root, rel))
		if lerr != nil {
			return true
		}
		// Still there, so it turned into a dangling symlink meanwhile.
		if perr := notAFile(filepath.Join(root, rel), info.Mode().Type()); perr != nil {
			err = perr
		}
		s.unusable(p, rel, info.Mode().Type()&fs.ModeSymlink != 0, err)
		return false
	}
	st := s.state(rel)
	s.setLink(rel, st, link)
	st.stamped = false
	if st.replaced {
		st.replaced = false
		p.touched = append(p.touched, st.keys()...) // its objects move back to their place in path order
	}
	if err != nil {
		st.sum = [sha256.Size]byte{} // re-parse once it is readable again
		s.readFailed(st, shown, err)
		return false
	}
	sum := sha256.Sum256(data)
	st.stamp, st.stamped = stamped, stampOK
	if sum == st.sum {
		st.suspect = 0
		return false // unchanged: good, or broken and reported already
	}
	// Refused before it is parsed: parsed objects are what memory holds.
	if err := s.opts.Limits.Total(shown, int64(len(data)), s.held-st.size); err != nil {
		st.sum = [sha256.Size]byte{} // read again when the others shrink
		s.readFailed(st, shown, err)
		return false
	}
	objs, err := ahead.objs, ahead.parseErr
	if !ahead.parsed {
		objs, err = s.opts.Parse(shown, data)
	}
	var refused *manifests.RefusedError
	if errors.As(err, &refused) {
		// Refused one object at a time, as the API server refuses one
		// update: the file's other objects are served as read, and each
		// refused one keeps the version it had.
		objs = keepRefused(st, objs, refused)
	} else if err != nil {
		st.sum = sum
		s.fileFailed(st, shown, err)
		return false
	}
	forgetResourceVersions(&objs)
	if refused == nil && count(&objs) == 0 && len(st.objects) > 0 {
		// Emptied, or caught between an in-place rewrite's truncate
		// and its write: believed only if it stays so.
		if st.suspect < suspectRereads {
			st.suspect++
			p.suspects = append(p.suspects, rel)
			return false
		}
		s.log.Info("manifest file has no objects any more; its objects are withdrawn", "file", shown)
	}
	st.suspect = 0
	st.sum = sum
	s.held += int64(len(data)) - st.size
	st.size = int64(len(data))
	p.touched = append(p.touched, s.setObjects(rel, st, objs)...)
	if refused != nil {
		s.objectsRefused(st, shown, refused)
		return false
	}
	if st.failing {
		s.log.Info("manifest file parses again", "file", shown)
	}
	s.countsDirty = s.countsDirty || st.failing
	st.failing, st.problem = false, ""
	return false
}

// unusable handles a manifest path that exists but cannot be read as a
// file (err says why): its objects stay; a dangling link is read again,
// settle apart, before it is reported.
func (s *Source) unusable(p *pass, rel string, link bool, err error) {
	st := s.state(rel)
	s.setLink(rel, st, link)
	st.stamped = false
	st.sum = [sha256.Size]byte{}
	if st.replaced {
		st.replaced = false
		p.touched = append(p.touched, st.keys()...) // its objects move back to their place in path order
	}
	if errors.Is(err, fs.ErrNotExist) && !st.failing && st.suspect < suspectRereads {
		st.suspect++
		p.suspects = append(p.suspects, rel)
		return
	}
	s.readFailed(st, filepath.Join(s.opts.Dir, rel), err)
}

// replacedByDirectory handles a file replaced by a directory: an error for
// the file's path, and the directory's manifests are read as files of
// their own, which win over the file's kept objects.
func (s *Source) replacedByDirectory(p *pass, rel string) {
	st := s.files[rel]
	st.sum = [sha256.Size]byte{}
	if !st.replaced {
		st.replaced = true
		p.touched = append(p.touched, st.keys()...) // its objects now yield to the directory's
	}
	s.readFailed(st, filepath.Join(s.opts.Dir, rel), errors.New("replaced by a directory; its manifests are read as files of their own"))
}

// setLink records whether rel is a symlink; the set of them is kept so a
// read of a few paths does not walk every file to find the links.
func (s *Source) setLink(rel string, st *fileState, link bool) {
	st.link = link
	if link {
		s.links[rel] = true
	} else {
		delete(s.links, rel)
	}
}

// state returns rel's state, creating it.
func (s *Source) state(rel string) *fileState {
	st := s.files[rel]
	if st == nil {
		st = &fileState{}
		s.files[rel] = st
	}
	return st
}

// readFailed reports a path that cannot be read, once per distinct error.
func (s *Source) readFailed(st *fileState, shown string, err error) {
	if st.failing && st.problem == err.Error() {
		return
	}
	s.fileFailed(st, shown, err)
}

// fileFailed reports a file that cannot be used; its last good objects stay.
func (s *Source) fileFailed(st *fileState, shown string, err error) {
	s.countsDirty = s.countsDirty || !st.failing
	st.failing, st.problem, st.suspect = true, err.Error(), 0
	s.log.Error("manifest file ignored; keeping its last good objects", "file", shown, "error", err)
	s.metrics.fileErrors.Inc() // after the log line, so a reader of both sees it
}

// objectsRefused reports a file whose other objects are served while some
// are refused: the file counts as failing until they are admitted.
func (s *Source) objectsRefused(st *fileState, shown string, refused *manifests.RefusedError) {
	s.countsDirty = s.countsDirty || !st.failing
	st.failing, st.problem = true, refused.Error()
	s.log.Error("manifest objects refused; serving the file's others, and each refused object's last good version", "file", shown, "error", refused)
	s.metrics.fileErrors.Inc()
}

// countFiles refreshes the file gauges.
func (s *Source) countFiles() {
	if !s.countsDirty && len(s.files) == s.countedFiles {
		return // a walk of every file per pass was a tenth of a churning server's CPU
	}
	s.countsDirty, s.countedFiles = false, len(s.files)
	failing := 0
	for _, st := range s.files {
		if st.failing {
			failing++
		}
	}
	s.metrics.files.Set(float64(len(s.files)))
	s.metrics.failingFiles.Set(float64(failing))
}

// rewatchRoot watches the directory again after it was deleted and
// re-created (a deleted directory's watch ends); the resync finds it.
func (s *Source) rewatchRoot(watcher *fsnotify.Watcher) {
	if watcher == nil || slices.Contains(watcher.WatchList(), s.opts.Dir) {
		return
	}
	if err := watcher.Add(s.opts.Dir); err != nil {
		s.log.Warn("cannot watch the directory again; it is re-read every resync", "error", err)
		return
	}
	s.log.Info("watching the directory again")
}

// watchDirs adds a watch for every directory not yet watched; inotify is
// not recursive. Removed directories drop their watch by themselves.
func (s *Source) watchDirs(watcher *fsnotify.Watcher, root string, dirs []string) {
	if watcher == nil {
		return
	}
	present := make(map[string]bool, len(dirs))
	for _, d := range dirs {
		present[d] = true
	}
	for d := range s.watched {
		if !present[d] {
			delete(s.watched, d) // re-added if the directory comes back
		}
	}
	for _, d := range dirs {
		if s.watched[d] || d == root {
			continue
		}
		if err := watcher.Add(d); err != nil {
			s.log.Warn("cannot watch subdirectory; it is re-read every resync", "dir", d, "error", err)
			continue
		}
		s.watched[d] = true
	}
}
