package main

import (
	"path/filepath"
	"strings"
)

// kubectlPluginName is the binary's name as a kubectl plugin: kubectl
// runs kubectl-tlsplane with the words after `kubectl tlsplane`.
const kubectlPluginName = "kubectl-tlsplane"

// programName is how the user invoked us, for usage and errors: "kubectl
// tlsplane" when argv0 is the plugin's name (a copy or a symlink), else
// "tlsplane". The subcommands are the same either way.
func programName(argv0 string) string {
	base := strings.TrimSuffix(filepath.Base(argv0), ".exe")
	if base == kubectlPluginName {
		return "kubectl tlsplane"
	}
	return "tlsplane"
}

// usageFor is usage with its command lines spelled as prog.
func usageFor(prog string) string {
	if prog == "tlsplane" {
		return usage
	}
	return strings.ReplaceAll(usage, "\n  tlsplane ", "\n  "+prog+" ")
}
