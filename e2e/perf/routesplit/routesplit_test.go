package routesplit

import (
	"bufio"
	"errors"
	"flag"
	"fmt"
	"math"
	"net"
	"net/http"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tlsplane/tlsplane/e2e/harness"
)

var (
	run        = flag.Bool("routesplit", false, "run TestRouteSplit (needs Envoy): edit→applied per way of splitting the route table")
	sizes      = flag.String("routesplit.n", "1000,10000", "comma-separated hostname counts")
	shapeList  = flag.String("routesplit.shapes", "rds,vhds,srds,srds-inline,vhds-ondemand", "shapes to measure: rds, vhds, vhds-ondemand, srds, srds-inline")
	editCount  = flag.Int("routesplit.edits", 25, "edits per shape and size")
	idle       = flag.Duration("routesplit.idle", 300*time.Millisecond, "quiet before each edit")
	patience   = flag.Duration("routesplit.patience", 10*time.Second, "bound on one edit's propagation")
	loadBound  = flag.Duration("routesplit.load", 5*time.Minute, "bound on Envoy's initial load")
	listenersN = flag.Bool("routesplit.listeners", true, "also run the two-listener scoped RDS check")
)

func newShape(name string) (shape, error) {
	switch name {
	case "rds":
		return &oneTable{}, nil
	case "vhds":
		return &vhds{push: true}, nil
	case "vhds-ondemand":
		return &vhds{push: false}, nil
	case "srds":
		return &scoped{}, nil
	case "srds-inline":
		return &scoped{inline: true}, nil
	}
	return nil, fmt.Errorf("unknown shape %q", name)
}

// result is one shape at one size.
type result struct {
	shape    string
	n, edits int
	// ms per edit, sorted: edit → Envoy's update_time; edit → seen by a
	// request; Envoy's update_duration; edit → this server's Send
	// returned; update_time − that (Envoy's part); main-thread CPU.
	applied, probed, upd, serve, envoyPart, cpu []float64
	initial                                     time.Duration
	rss, allocated, heap                        float64 // MiB, after the initial load
	nacks                                       int
	note, load                                  string
}

func (r result) String() string {
	q := func(v []float64) string {
		if len(v) == 0 {
			return "p50=- p99=- max=-"
		}
		return fmt.Sprintf("p50=%.1f p99=%.1f max=%.1f", pct(v, 50), pct(v, 99), pct(v, 100))
	}
	return fmt.Sprintf("RESULT shape=%-13s n=%-5d edits=%d applied_ms[%s] envoy_part_ms[%s] main_cpu_ms[%s] update_duration_ms[%s] probe_ms[%s] server_send_ms[%s] initial_load=%.1fs envoy_rss=%.0fMiB allocated=%.0fMiB heap=%.0fMiB nacks=%d load=%s%s",
		r.shape, r.n, r.edits, q(r.applied), q(r.envoyPart), q(r.cpu), q(r.upd), q(r.probed), q(r.serve), r.initial.Seconds(), r.rss, r.allocated, r.heap, r.nacks, r.load, r.note)
}

// pct is the nearest-rank percentile of sorted v.
func pct(v []float64, p float64) float64 {
	i := int(math.Ceil(p/100*float64(len(v)))) - 1
	return v[max(0, min(i, len(v)-1))]
}

func TestRouteSplit(t *testing.T) {
	if !*run {
		t.Skip("a measurement, not a test: run with -args -routesplit")
	}
	bin, err := harness.EnvoyBinary()
	if err != nil {
		t.Fatal(err)
	}
	var results []result
	for _, ns := range strings.Split(*sizes, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(ns))
		if err != nil || n < 4 {
			t.Fatalf("-routesplit.n: %q", ns)
		}
		for _, name := range strings.Split(*shapeList, ",") {
			sh, err := newShape(strings.TrimSpace(name))
			if err != nil {
				t.Fatal(err)
			}
			t.Run(fmt.Sprintf("%s/n=%d", sh.name(), n), func(t *testing.T) {
				r := measure(t, bin, sh, n)
				t.Log(r)
				results = append(results, r)
			})
		}
	}
	if *listenersN {
		t.Run("srds-two-listeners", func(t *testing.T) { twoListeners(t, bin) })
	}
	for _, r := range results {
		t.Log(r)
	}
}

// world is one shape served to one running Envoy.
type world struct {
	srv   *adsServer
	envoy *envoy
	ports []int
}

func serve(t *testing.T, bin string, sh shape, n int) (*world, time.Duration) {
	srv, addr := startADS(t, sh.vhdsPush())
	w := &world{srv: srv, ports: []int{harness.FreePort(t), harness.FreePort(t)}}
	srv.set(append(sh.listeners(w.ports), sh.initial(n)...))
	start := time.Now()
	w.envoy = startEnvoy(t, bin, t.TempDir(), addr)
	if err := eventually(*loadBound, 50*time.Millisecond, func() error {
		if w.envoy.Exited() {
			return errors.New("envoy exited")
		}
		if nacks := srv.nackList(); len(nacks) > 0 {
			return errors.New("NACKed")
		}
		for _, i := range []int{n - 1, 0, n / 2} {
			if err := redirected(w.ports[0], i, 0); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		t.Fatalf("%s n=%d: Envoy never served the routes: %v\nNACKs: %v\n%s", sh.name(), n, err, srv.nackList(), w.envoy.LogTail(30))
	}
	return w, time.Since(start)
}

func measure(t *testing.T, bin string, sh shape, n int) result {
	w, initial := serve(t, bin, sh, n)
	r := result{shape: sh.name(), n: n, initial: initial}
	time.Sleep(2 * time.Second) // let the load's last work settle
	if st, err := w.envoy.values(`^server\.memory_(allocated|heap_size)$`); err == nil {
		r.allocated, r.heap = float64(st["server.memory_allocated"])/(1<<20), float64(st["server.memory_heap_size"])/(1<<20)
	}
	r.rss = rssMiB(w.envoy.PID())
	names, _ := w.envoy.values(`(update_time|config_reload_time_ms)$`)
	var shown []string
	for k := range names {
		if !regexp.MustCompile(`svc-[1-9]`).MatchString(k) {
			shown = append(shown, k)
		}
	}
	slices.Sort(shown)
	t.Logf("%s n=%d: %d update_time/config_reload_time_ms stats; those not of svc-1..: %v", sh.name(), n, len(names), shown)

	gen := map[int]int{}
	var gauges []string
	for e := range *editCount {
		i := (e*7919 + 1) % n
		gen[i]++
		// Not live before the edit (for on-demand VHDS this request also
		// loads the virtual host, before the quiet spell).
		if err := redirected(w.ports[0], i, gen[i]); err == nil {
			t.Fatalf("edit %d: /v%d of %s redirects before the edit", e, gen[i], host(i))
		}
		time.Sleep(*idle)
		re := sh.stats(i)
		before, err := w.envoy.values(re + `.*(update_time|config_reload_time_ms)$`)
		if err != nil {
			t.Fatal(err)
		}
		time.Sleep(50 * time.Millisecond) // the read above merged the histograms
		histBefore, err := w.envoy.histSums(re + `.*update_duration$`)
		if err != nil {
			t.Fatal(err)
		}
		res := sh.edit(i, gen[i])
		cpuBefore := mainThreadCPU(w.envoy.PID())
		sent := time.Now()
		w.srv.set([]resource{res})
		var seen time.Time
		if err := harness.Eventually(*patience, 2*time.Millisecond, func() error {
			if err := redirected(w.ports[0], i, gen[i]); err != nil {
				return err
			}
			seen = time.Now()
			return nil
		}); err != nil {
			t.Fatalf("edit %d (%s) not live within %s: %v; NACKs %v", e, host(i), *patience, err, w.srv.nackList())
		}
		time.Sleep(30 * time.Millisecond) // the main thread's last work on it (its ACK)
		cpuMs := float64((mainThreadCPU(w.envoy.PID()) - cpuBefore).Microseconds()) / 1000
		time.Sleep(20 * time.Millisecond)
		after, err := w.envoy.values(re + `.*(update_time|config_reload_time_ms)$`)
		if err != nil {
			t.Fatal(err)
		}
		time.Sleep(100 * time.Millisecond)
		histAfter, err := w.envoy.histSums(re + `.*update_duration$`)
		if err != nil {
			t.Fatal(err)
		}
		var applied int64
		var moved []string
		for k, v := range after {
			if v != before[k] && strings.HasSuffix(k, "update_time") {
				applied = max(applied, v)
				moved = append(moved, k)
			}
			if v != before[k] {
				gauges = append(gauges, k)
			}
		}
		if applied == 0 {
			t.Fatalf("edit %d (%s): no update_time among %v moved", e, host(i), after)
		}
		sentMs := float64(sent.UnixMicro()) / 1000
		var upd float64
		for k, v := range histAfter {
			if v[1] > histBefore[k][1] {
				upd += v[0] - histBefore[k][0]
			}
		}
		appliedMs, probeMs := float64(applied)-sentMs, float64(seen.Sub(sent).Microseconds())/1000
		serveMs := float64(w.srv.sentTime(res.typeURL, res.name).Sub(sent).Microseconds()) / 1000
		r.applied, r.probed, r.upd, r.serve = append(r.applied, appliedMs), append(r.probed, probeMs), append(r.upd, upd), append(r.serve, serveMs)
		r.envoyPart, r.cpu = append(r.envoyPart, appliedMs-serveMs), append(r.cpu, cpuMs)
		slices.Sort(moved)
		t.Logf("edit %2d %-16s applied %6.1fms (Envoy's %v) sent +%.1fms, Envoy's part %6.1fms, main thread CPU %6.1fms, update_duration %5.1fms, seen %6.1fms, load %s",
			e, host(i), appliedMs, moved, serveMs, appliedMs-serveMs, cpuMs, upd, probeMs, loadAverage())
	}
	r.load = loadAverage()
	for _, v := range []*[]float64{&r.applied, &r.probed, &r.upd, &r.serve, &r.envoyPart, &r.cpu} {
		slices.Sort(*v)
	}
	// After the edits: on-demand VHDS would not load a hostname that the
	// catch-all answers first, and the edits would wait for ever.
	semantics(t, sh, w, n, gen)
	r.edits = len(r.applied)
	r.nacks = len(w.srv.nackList())
	if asked := w.srv.askedList(); len(asked) > 0 {
		r.note = fmt.Sprintf(" on_demand_asked=%d", len(asked))
	}
	slices.Sort(gauges)
	t.Logf("%s n=%d: stats moved by edits: %v", sh.name(), n, slices.Compact(gauges))
	return r
}

// redirected checks that /v<gen> of hostname i is live: Envoy answers 302
// to moved.example.
func redirected(port, i, gen int) error {
	code, loc, err := get(port, host(i), "/v"+strconv.Itoa(gen))
	if err != nil {
		return err
	}
	if code != http.StatusFound || !strings.HasPrefix(loc, "http://"+movedHost) {
		return fmt.Errorf("%s /v%d: %d %q", host(i), gen, code, loc)
	}
	return nil
}

var probeClient = &http.Client{
	Timeout:       2 * time.Second,
	CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	Transport:     &http.Transport{MaxIdleConnsPerHost: 4},
}

func get(port int, hostHeader, path string) (int, string, error) {
	req, err := http.NewRequest(http.MethodGet, "http://127.0.0.1:"+strconv.Itoa(port)+path, nil)
	if err != nil {
		return 0, "", err
	}
	req.Host = hostHeader
	resp, err := probeClient.Do(req)
	if err != nil {
		return 0, "", err
	}
	resp.Body.Close()
	return resp.StatusCode, resp.Header.Get("Location"), nil
}

// rawGet sends the Host header byte for byte (Go's client might tidy it).
func rawGet(port int, hostHeader, path string) string {
	c, err := net.DialTimeout("tcp", "127.0.0.1:"+strconv.Itoa(port), 2*time.Second)
	if err != nil {
		return "error: " + err.Error()
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(5 * time.Second))
	fmt.Fprintf(c, "GET %s HTTP/1.1\r\nHost: %s\r\nConnection: close\r\n\r\n", path, hostHeader)
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		return "error: " + err.Error()
	}
	resp.Body.Close()
	out := strconv.Itoa(resp.StatusCode)
	if loc := resp.Header.Get("Location"); loc != "" {
		out += " → " + loc
	}
	return out
}

// semantics probes what Gateway API asks of hostnames: case-insensitive,
// port ignored, wildcard hostnames, a route without hostnames catching
// the rest.
func semantics(t *testing.T, sh shape, w *world, n int, gen map[int]int) {
	// want is the virtual host that must answer, told by its redirect.
	path := func(i int) string { return "/v" + strconv.Itoa(gen[i]) }
	checks := []struct{ what, host, path, want string }{
		{"exact", host(3), path(3), movedHost},
		{"upper case", strings.ToUpper(host(4)), path(4), movedHost},
		{"with port", host(5) + ":8080", path(5), movedHost},
		{"mixed case and port", "Svc-6.Example:8080", path(6), movedHost},
		{"wildcard *.wild.example", "a.wild.example", "/x", wildMoved},
		{"no hostname matches (catch-all)", "nomatch.example", "/x", catchAllHost},
		{"first request after the catch-all", host(n - 2), path(n - 2), movedHost},
	}
	for _, c := range checks {
		got := rawGet(w.ports[0], c.host, c.path)
		verdict := "ok"
		if !strings.HasPrefix(got, "302 → http://"+c.want+"/") {
			verdict = "BREAKS"
		}
		t.Logf("SEMANTICS shape=%s %-32s Host %-20q → %-45s (Gateway API wants %s) %s", sh.name(), c.what, c.host, got, c.want, verdict)
	}
	if asked := w.srv.askedList(); len(asked) > 0 {
		t.Logf("SEMANTICS shape=%s on-demand VHDS names Envoy asked for: %q", sh.name(), asked)
	}
}

// twoListeners serves two listeners, each with scoped RDS of its own (their
// own scoped_routes names), over one ADS stream: SRDS subscriptions are
// wildcard, so does each see the other's scopes? And what does the same
// hostname on both (two Gateway listeners on two ports) do?
func twoListeners(t *testing.T, bin string) {
	sh := &scoped{second: true}
	const n = 10
	w, _ := serve(t, bin, sh, n)
	only2 := sh.scope("l2-only", "only2.example", "rs2-only2", "only2.example", redirectAll("l2-moved.example"))
	w.srv.set(only2)
	time.Sleep(time.Second)
	t.Logf("LISTENERS listener 2, Host only2.example (its own scope): %s", rawGet(w.ports[1], "only2.example", "/x"))
	t.Logf("LISTENERS listener 1, Host only2.example (listener 2's scope): %s", rawGet(w.ports[0], "only2.example", "/x"))
	t.Logf("LISTENERS listener 2, Host svc-1.example (listener 1's scope): %s", rawGet(w.ports[1], "svc-1.example", "/v0"))
	// The same hostname, under another scope name, for listener 2.
	clash := sh.scope("l2-svc-1", host(1), "rs2-svc-1", host(1), redirectAll("l2-moved.example"))
	w.srv.set(clash)
	time.Sleep(time.Second)
	t.Logf("LISTENERS after adding scope l2-svc-1 with key %s: NACKs %q", host(1), w.srv.nackList())
	t.Logf("LISTENERS listener 1, Host svc-1.example: %s; listener 2: %s",
		rawGet(w.ports[0], host(1), "/v0"), rawGet(w.ports[1], host(1), "/v0"))
	st, _ := w.envoy.values(`scoped_rds.*(update_rejected|update_success|config_reload)$`)
	t.Logf("LISTENERS stats %v", st)
}

// eventually is harness.Eventually that stops at a NACK.
func eventually(timeout, interval time.Duration, cond func() error) error {
	var stop error
	err := harness.Eventually(timeout, interval, func() error {
		err := cond()
		if err != nil && err.Error() == "NACKed" {
			stop = err
			return nil
		}
		return err
	})
	if stop != nil {
		return stop
	}
	return err
}
