package pipeline

import (
	"context"

	"github.com/tlsplane/tlsplane/translator"
)

// Source turns the outside world (a directory of manifests, or the
// Kubernetes API) into translator.Inputs. Both sources feed the same
// pipeline through this contract.
type Source interface {
	// Run watches until ctx ends. It calls changed (never concurrently
	// with itself) after the objects it would return from Inputs changed.
	Run(ctx context.Context, changed func()) error
	// Synced is closed once Inputs holds a complete first view.
	Synced() <-chan struct{}
	// Inputs returns the current objects. The returned value is never
	// mutated afterwards; it is safe to call from any goroutine.
	Inputs() translator.Inputs
}

// ChangeSource is a Source that also says which objects changed, so a pass
// translates only what those objects reach.
type ChangeSource interface {
	Source
	// Changes returns what changed since the previous call; the first call
	// returns Resync. The pipeline calls Changes before Inputs, so Inputs
	// holds at least what Changes reported.
	Changes() translator.Changes
}
