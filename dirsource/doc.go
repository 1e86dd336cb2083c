// Package dirsource is the embedded default source: it reads a directory of
// Kubernetes manifests (the formats `tlsplane translate` reads) and watches
// it, including the atomic symlink swaps of a mounted ConfigMap volume.
//
// It owns file reading and per-file state only. Parsing is delegated to the
// Parse function it is given, and it never talks to the Kubernetes API.
package dirsource
