package manifests

import (
	"fmt"
	"io"
	"os"

	"github.com/tlsplane/tlsplane/crds"
)

// Limits bound what reading manifests may cost and reach, whoever wrote
// them: a file as read from disk, the files read at once (and, in a
// directory source, held), what YAML aliases add to a file once expanded,
// and where a directory's files may come from. A 1 MiB string aliased 300
// times is a 1 MiB file that decodes to 300 MiB, and the decoders copy it
// several times over. A zero field is its DefaultLimits value.
type Limits struct {
	// FileBytes bounds one manifest file.
	FileBytes int64
	// TotalBytes bounds the sum of the files read together: translate's
	// paths, or the files whose objects a directory source serves.
	TotalBytes int64
	// AliasBytes bounds what YAML aliases add to one file's documents
	// once expanded, summed over the file.
	AliasBytes int64
	// CRDChannel is the Gateway API CRD channel (crds.Standard or
	// crds.Experimental) Gateway API objects are admitted against, as an
	// API server with that channel's CRDs installed would admit them.
	// Experimental, the default, is a superset and serves the X kinds
	// tlsplane reads. NoCRDs admits nothing (Unadmitted).
	CRDChannel string
	// FollowExternalLinks lets a directory's symlinks lead to files
	// outside it (ReadFileIn); by default a directory's files are read
	// only from inside it.
	FollowExternalLinks bool
}

// NoCRDs is the CRDChannel that admits nothing: Gateway API objects are
// read as the file gives them, as an API server with older CRDs might hold
// them. It is for tests of the translator's own rules on such objects; no
// flag sets it.
const NoCRDs = "none"

// Unadmitted is DefaultLimits reading Gateway API objects unadmitted
// (NoCRDs).
var Unadmitted = func() Limits { l := DefaultLimits; l.CRDChannel = NoCRDs; return l }()

// The flags that set each limit, named by the errors so that they say how
// to raise it.
const (
	FileBytesFlag  = "dir-max-file-bytes"
	TotalBytesFlag = "dir-max-total-bytes"
	AliasBytesFlag = "dir-max-alias-bytes"
)

// DefaultLimits take one generated file of 100,000 Services, each with its
// CA ConfigMap, BackendTLSPolicy, EndpointSlice and HTTPRoute (198 MiB, as
// TestGeneratedManifestOfTenThousandServices measures; it reads the 10,000
// of 19.6 MiB), or a directory of files of the same total; the objects
// read from 256 MiB of such manifests take about 1.4 GiB of heap (5.5
// times their text, as measured at 10,000). Aliases are rare in
// generated manifests: 16 MiB of expansion is what a whole file could
// cost before these limits were flags.
var DefaultLimits = Limits{
	FileBytes:  256 << 20,
	TotalBytes: 256 << 20,
	AliasBytes: 16 << 20,
	CRDChannel: crds.Experimental,
}

// orDefaults fills the zero fields from DefaultLimits.
func (l Limits) orDefaults() Limits {
	if l.FileBytes <= 0 {
		l.FileBytes = DefaultLimits.FileBytes
	}
	if l.TotalBytes <= 0 {
		l.TotalBytes = DefaultLimits.TotalBytes
	}
	if l.AliasBytes <= 0 {
		l.AliasBytes = DefaultLimits.AliasBytes
	}
	if l.CRDChannel == "" {
		l.CRDChannel = DefaultLimits.CRDChannel
	}
	return l
}

// ReadFile reads a manifest file, refusing one over FileBytes without
// reading more than that.
func (l Limits) ReadFile(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return l.readAll(f, path)
}

// readAll reads f, refusing it when over FileBytes without reading more
// than that; path names it in messages.
func (l Limits) readAll(f *os.File, path string) ([]byte, error) {
	l = l.orDefaults()
	// Room for the whole file at once, as os.ReadFile makes it: growing
	// from io.ReadAll's 512 bytes was a directory read's largest copy.
	var data []byte
	if info, err := f.Stat(); err == nil && info.Mode().IsRegular() && info.Size() < l.FileBytes {
		data = make([]byte, 0, info.Size()+1)
	}
	for r := io.LimitReader(f, l.FileBytes+1); ; {
		if len(data) == cap(data) {
			data = append(data, 0)[:len(data)]
		}
		n, err := r.Read(data[len(data):cap(data)])
		data = data[:len(data)+n]
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
	}
	if int64(len(data)) > l.FileBytes {
		size := int64(len(data))
		if info, err := f.Stat(); err == nil && info.Size() > size {
			size = info.Size()
		}
		return nil, l.fileTooLarge(path, size)
	}
	return data, nil
}

// ReadFile is DefaultLimits.ReadFile.
func ReadFile(path string) ([]byte, error) { return DefaultLimits.ReadFile(path) }

func (l Limits) fileTooLarge(path string, size int64) error {
	return fmt.Errorf("%s: %s is over --%s (%s); raise it to read this file",
		path, Bytes(size), FileBytesFlag, Bytes(l.FileBytes))
}

// Total checks that a file of size bytes (path is only for messages) may
// be read while held bytes of other files are: their sum is at most
// TotalBytes.
func (l Limits) Total(path string, size, held int64) error {
	l = l.orDefaults()
	if size+held <= l.TotalBytes {
		return nil
	}
	return fmt.Errorf("%s: its %s would take the manifests read to %s, over --%s (%s); raise it to read this file",
		path, Bytes(size), Bytes(size+held), TotalBytesFlag, Bytes(l.TotalBytes))
}

// Bytes is a size as messages show it: exact bytes when small, else KiB,
// MiB or GiB.
func Bytes(n int64) string {
	units := []string{"KiB", "MiB", "GiB"}
	if n < 1<<10 {
		return fmt.Sprintf("%d bytes", n)
	}
	v, unit := float64(n)/(1<<10), units[0]
	for _, u := range units[1:] {
		if v < 1<<10 {
			break
		}
		v, unit = v/(1<<10), u
	}
	if v == float64(int64(v)) {
		return fmt.Sprintf("%d %s", int64(v), unit)
	}
	return fmt.Sprintf("%.1f %s", v, unit)
}
