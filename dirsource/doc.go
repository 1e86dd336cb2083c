// Package dirsource is the embedded default source: it reads a directory of
// Kubernetes manifests (the formats `tlsplane translate` reads) and watches
// it, including the atomic symlink swaps of a mounted ConfigMap volume.
//
// Nothing served is lost to a fault: a manifest path that cannot be read or
// parsed keeps its last good objects and is reported (a log line naming it,
// tlsplane_source_file_errors_total, tlsplane_source_files_failing). That
// includes a dangling symlink (a ConfigMap volume whose ..data dangles keeps
// every file) and a file replaced by a directory, whose own manifests are
// read as new files and win over the kept objects. Only a path with no
// directory entry left is deleted, and its objects withdrawn. A file whose
// objects vanish (emptied, or caught between an in-place rewrite's truncate
// and its write) and a dangling link are read again, settle apart, before
// that is believed; a file that stays empty is then accepted as emptied.
// Memory is bounded the same way (Options.Limits): a file over the
// per-file limit, or new content that would take the files whose objects
// are served over the total, is refused and keeps its last good objects.
// So is a manifest whose symlinks lead outside the directory (resolved
// through its own symlinks), unless Limits.FollowExternalLinks: links
// inside it, as a ConfigMap volume makes them, are followed. Only
// directories inside it are watched: symlinked directories are not
// walked.
//
// A change costs what changed: a burst of watch events re-reads the paths
// they name and every symlinked manifest (whose target can change with no
// event naming it), not the directory; a walk of the whole directory
// happens at start, every Resync, after lost events, and when a directory
// comes or goes. The source says which objects changed (Changes): those
// whose served object, after duplicates are resolved, is another one. An
// object a file still defines the same keeps its pointer through edits of
// that file, so it is not a change.
//
// It owns file reading and per-file state only. Parsing is delegated to the
// Parse function it is given, and it never talks to the Kubernetes API.
package dirsource
