// Command server is the echo-advanced image's entrypoint (package
// echoserver), which the e2e node agent runs as the container of the mesh
// manifests' echo Deployments.
package main

import (
	"os"

	"github.com/tlsplane/tlsplane/e2e/echoserver"
)

func main() { os.Exit(echoserver.Main(os.Args[1:], os.Stdout, os.Stderr)) }
