// Command client is the echo-advanced image's client (package echoclient),
// which the e2e node agent runs for `kubectl exec POD -- client URL ...`.
package main

import (
	"os"

	"github.com/tlsplane/tlsplane/e2e/echoclient"
)

func main() { os.Exit(echoclient.Main(os.Args[1:], os.Stdout, os.Stderr)) }
