package main

import (
	"fmt"
	"net/http"
	"runtime"
	"runtime/pprof"
	"strconv"
	"time"
)

// maxCPUProfile bounds /debug/pprof/profile's ?seconds=.
const maxCPUProfile = 60 * time.Second

// profileHandler serves the Go runtime's profiles for `go tool pprof`:
// /debug/pprof/profile?seconds=N (CPU, default 10 s, at most 60 s) and
// /debug/pprof/NAME for heap, allocs, goroutine, block, mutex and
// threadcreate (?debug=1 for text). What holds memory at 100,000
// Services is read from a running serve this way; the package
// net/http/pprof is not imported, so nothing is served on
// http.DefaultServeMux.
func profileHandler(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("name")
	if name == "profile" {
		seconds := 10
		if s := r.URL.Query().Get("seconds"); s != "" {
			n, err := strconv.Atoi(s)
			if err != nil || n <= 0 || time.Duration(n)*time.Second > maxCPUProfile {
				http.Error(w, fmt.Sprintf("seconds=%q: want a whole number of seconds from 1 to %d", s, int(maxCPUProfile.Seconds())), http.StatusBadRequest)
				return
			}
			seconds = n
		}
		w.Header().Set("Content-Type", "application/octet-stream")
		if err := pprof.StartCPUProfile(w); err != nil {
			http.Error(w, "a CPU profile is already being taken: "+err.Error(), http.StatusConflict)
			return
		}
		select {
		case <-time.After(time.Duration(seconds) * time.Second):
		case <-r.Context().Done():
		}
		pprof.StopCPUProfile()
		return
	}
	p := pprof.Lookup(name)
	if p == nil {
		http.Error(w, fmt.Sprintf("no profile %q: profile, heap, allocs, goroutine, block, mutex or threadcreate", name), http.StatusNotFound)
		return
	}
	debug, _ := strconv.Atoi(r.URL.Query().Get("debug"))
	if debug > 0 {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	} else {
		w.Header().Set("Content-Type", "application/octet-stream")
	}
	if name == "heap" && r.URL.Query().Get("gc") != "" {
		runtime.GC() // ?gc=1: what is live, not what the last cycle left
	}
	p.WriteTo(w, debug)
}
