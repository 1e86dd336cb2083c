// Command tlsplane is an Envoy xDS control plane for Gateway API
// BackendTLSPolicy, Gateways and routes of every route kind
// (translator.RouteKinds). This file only dispatches subcommands; each
// lives in its own file and owns its flags.
package main

import (
	"errors"
	"fmt"
	"os"
)

var usage = `tlsplane — an Envoy xDS control plane for Gateway API BackendTLSPolicy,
Gateways, ` + routeKindList("s", ", ", " and ") + `

Usage:
  tlsplane translate [-o yaml|json] [flags] PATH...   (tlsplane translate --help)
  tlsplane validate [-o text|json|github] PATH...     (tlsplane validate --help)
  tlsplane serve [flags]                               (tlsplane serve --help)
  tlsplane status [policy NAMESPACE/NAME] [-n NS | --admin ADDR] [-o table|json]
                                                       (tlsplane status --help)
  tlsplane sidecar-bootstrap [flags]                   (tlsplane sidecar-bootstrap --help)
  tlsplane capture [--remove] [flags]                  (tlsplane capture --help)
  tlsplane inject [flags]                              (tlsplane inject --help)
  tlsplane version
`

func main() {
	prog := programName(os.Args[0]) // "kubectl tlsplane" as a kubectl plugin
	if len(os.Args) < 2 {
		fmt.Fprint(os.Stderr, usageFor(prog))
		os.Exit(2)
	}
	var err error
	switch os.Args[1] {
	case "translate":
		err = runTranslate(os.Args[2:], os.Stdout, os.Stderr)
	case "validate":
		err = runValidate(os.Args[2:], os.Stdout, os.Stderr)
	case "serve":
		err = runServe(os.Args[2:])
	case "status":
		err = runStatus(os.Args[2:], os.Stdout)
	case "sidecar-bootstrap":
		err = runSidecarBootstrap(os.Args[2:], os.Stdout)
	case "capture":
		err = runCapture(os.Args[2:], os.Stdout)
	case "inject":
		err = runInject(os.Args[2:], os.Stdout)
	case "version", "--version":
		fmt.Println(versionLine())
	case "-h", "--help", "help":
		fmt.Print(usageFor(prog))
	default:
		fmt.Fprintf(os.Stderr, "%s: unknown command %q\n\n%s", prog, os.Args[1], usageFor(prog))
		os.Exit(2)
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "%s %s: %v\n", prog, os.Args[1], err)
		// A refusal (translate printed it, validate's findings) exits 3.
		var coded interface{ exitCode() int }
		if errors.As(err, &coded) {
			os.Exit(coded.exitCode())
		}
		os.Exit(1)
	}
}
