// Package certfiles reads a set of TLS files again when any of them
// changes (size, mode or modification time), keeping the last good
// result while a rotation is half written: a renewed Kubernetes Secret or
// cert-manager swaps the files in place, and a server must neither
// restart for it nor serve a broken pair. The xDS server's certificate
// and client CA (xds) and the mesh injection webhook's serving
// certificate (inject) are read this way.
package certfiles

import (
	"os"
	"slices"
	"sync"
	"time"
)

// Files is what read makes of the files at paths, made again when they
// change.
type Files[T any] struct {
	paths []string
	read  func() (T, error)

	mu      sync.Mutex
	stamps  []stamp
	current T
	good    bool
}

// New watches paths; read reads them (it names the files in its errors,
// never their bytes).
func New[T any](read func() (T, error), paths ...string) *Files[T] {
	return &Files[T]{paths: paths, read: read}
}

type stamp struct {
	size    int64
	mode    os.FileMode
	modTime time.Time
}

// Load is what the files hold now, read again if any changed. On an
// error (a file gone, a pair that does not parse) it returns the last
// good result, if there is one, with the error; ok says whether there is.
func (f *Files[T]) Load() (v T, ok bool, err error) {
	stamps := make([]stamp, len(f.paths))
	for i, path := range f.paths {
		info, err := os.Stat(path)
		if err != nil {
			f.mu.Lock()
			defer f.mu.Unlock()
			return f.current, f.good, err
		}
		stamps[i] = stamp{size: info.Size(), mode: info.Mode(), modTime: info.ModTime()}
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.good && slices.Equal(stamps, f.stamps) {
		return f.current, true, nil
	}
	next, err := f.read()
	if err != nil {
		return f.current, f.good, err
	}
	f.current, f.stamps, f.good = next, stamps, true
	return next, true, nil
}
