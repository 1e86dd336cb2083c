package main

import (
	"flag"

	"github.com/tlsplane/tlsplane/translator/xbackend"
)

// registerXBackendHostnames adds --xbackend-hostnames, shared by serve and
// translate: the operator's egress allow-list for XBackends.
func registerXBackendHostnames(fs *flag.FlagSet, allowed **xbackend.Hostnames) {
	const name = "xbackend-hostnames"
	fs.Func(name, "the external hostnames an XBackend may name: `HOST|*.DOMAIN[,...]` (a wildcard is one or more labels before DOMAIN); "+
		"an XBackend naming another is Accepted=False, Invalid. Empty (the default) allows every external hostname but localhost names, "+
		"which only a list naming them allows; IP addresses and .cluster.local are refused whatever this says", func(v string) error {
		h, err := xbackend.ParseHostnames(v, "--"+name)
		*allowed = h
		return err
	})
}
