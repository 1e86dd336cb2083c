package main

import (
	"flag"
	"fmt"

	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/tlsplane/tlsplane/manifests"
)

// dirLimitsGroup heads the manifest bounds in serve's and translate's help.
var dirLimitsGroup = flagGroup{"Manifest limits", []string{
	manifests.FileBytesFlag, manifests.TotalBytesFlag, manifests.AliasBytesFlag, manifests.FollowExternalLinksFlag,
}}

// registerDirLimits adds the bounds on reading manifests (their size, and
// where a directory's files may come from), shared by serve (--dir) and
// translate, whose errors name these flags.
func registerDirLimits(fs *flag.FlagSet) *manifests.Limits {
	limits := manifests.DefaultLimits
	fs.Var(byteSize{&limits.FileBytes}, manifests.FileBytesFlag,
		"largest manifest file read, in `BYTES` (a quantity: 512Mi, 1Gi)")
	fs.Var(byteSize{&limits.TotalBytes}, manifests.TotalBytesFlag,
		"largest sum of the manifest files read, in `BYTES`: a directory's files whose objects are served, or translate's paths")
	fs.Var(byteSize{&limits.AliasBytes}, manifests.AliasBytesFlag,
		"largest size YAML aliases may add to a manifest file once expanded, in `BYTES`")
	fs.BoolVar(&limits.FollowExternalLinks, manifests.FollowExternalLinksFlag, false,
		"follow symlinks in a manifest directory (--dir, translate's directories) to files outside it; by default such a file is refused")
	return &limits
}

// byteSize is a flag of a positive number of bytes, written as a
// Kubernetes quantity (268435456, 256Mi, 1Gi).
type byteSize struct{ n *int64 }

func (b byteSize) String() string {
	if b.n == nil {
		return ""
	}
	return resource.NewQuantity(*b.n, resource.BinarySI).String()
}

func (b byteSize) Set(v string) error {
	q, err := resource.ParseQuantity(v)
	if err != nil {
		return fmt.Errorf("%q is not a size in bytes (256Mi, 1Gi, 268435456)", v)
	}
	n, ok := q.AsInt64()
	if !ok || n <= 0 {
		return fmt.Errorf("%q: want a whole number of bytes above 0", v)
	}
	*b.n = n
	return nil
}
