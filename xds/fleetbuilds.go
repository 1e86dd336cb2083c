package xds

import (
	"sync"

	"github.com/tlsplane/tlsplane/snapshots"
)

// fleetBuilds counts the connected streams of each fleet per Envoy build
// (node.user_agent_build_version and its ssl.version), and tells the
// publisher a fleet's set of builds whenever it changes, so the publisher
// withholds what one of them cannot take (snapshots/buildcheck.go). A
// stream whose node names no known build counts for nothing: Envoy
// decides for it.
type fleetBuilds struct {
	// mu is held while the publisher is told, so that two streams'
	// changes reach it in the order they were counted.
	mu     sync.Mutex
	counts map[string]map[snapshots.EnvoyBuild]int
	tell   func(fleet string, builds []snapshots.EnvoyBuild)
}

func newFleetBuilds(tell func(string, []snapshots.EnvoyBuild)) *fleetBuilds {
	return &fleetBuilds{counts: map[string]map[snapshots.EnvoyBuild]int{}, tell: tell}
}

// add counts one stream more (delta 1) or less (-1) of build in fleet.
func (f *fleetBuilds) add(fleet string, build snapshots.EnvoyBuild, delta int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	builds := f.counts[fleet]
	if builds == nil {
		builds = map[snapshots.EnvoyBuild]int{}
		f.counts[fleet] = builds
	}
	n := builds[build] + delta
	changed := (n > 0) != (builds[build] > 0) // the build joined or left the set
	if n > 0 {
		builds[build] = n
	} else {
		delete(builds, build)
	}
	if len(builds) == 0 {
		delete(f.counts, fleet)
	}
	if !changed {
		return
	}
	set := make([]snapshots.EnvoyBuild, 0, len(builds))
	for b := range builds {
		set = append(set, b)
	}
	f.tell(fleet, set)
}
