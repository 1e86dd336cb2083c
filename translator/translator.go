package translator

import (
	"sync"
)

// Translator is Translate with a memory: it reuses what it computed for
// objects that did not change since its last call (the same pointer, or
// the same UID at the same resourceVersion), so a translation after one
// edit costs little more than reading the inputs. Its results are exactly
// Translate's. Calls are serialised.
//
// What it keeps (memory): parsed CA bundles (per object, checked against
// the bytes), each policy's verdict and emitted TLS (per policy and the CA
// objects it references), each Service's clusters and load assignments
// (per Service, its EndpointSlices and the verdicts governing its ports),
// and each policy's status (per verdict, targets and the previous
// status). Only what the last call used is kept, so memory follows the
// inputs. Besides, what Update starts from (state.go).
type Translator struct {
	mu sync.Mutex
	memory

	// world is the last translation's, for Update; nil for a forgetful
	// Translator and after options changed. generation numbers Outputs.
	world      *world
	whole      *wholeTranslation // the last whole translation, until Update builds its world
	generation uint64
	// mesh is the mesh of the last Output, for Update: the fleets it
	// emits again keep these pointers when nothing in them changed.
	mesh meshOutput
}

// New returns a Translator with nothing remembered.
func New() *Translator {
	return &Translator{memory: newMemory()}
}

// newForgetful is a Translator for one call: it stores nothing it could
// only use in a later call.
func newForgetful() *Translator {
	t := New()
	t.forget = true
	return t
}

// withDefaults fills in the options whose zero value means a default.
func withDefaults(opts Options) Options {
	if opts.ControllerName == "" {
		opts.ControllerName = DefaultControllerName
	}
	return opts
}

// begin starts a call; options other than last time's forget everything,
// since every verdict and status depends on them.
func (t *Translator) begin(opts Options) {
	if t.reset(opts) {
		t.world, t.whole = nil, nil
	}
}
