package kubechurn

import (
	"os"
	"slices"
	"syscall"
	"testing"
	"time"
)

// The measurement's own logic, without processes: what go test runs here
// without -bench.

func TestGenAddressNamesTheUpdate(t *testing.T) {
	seen := map[string]int{}
	for _, g := range []int{0, 1, 249, 250, 62499, 62500, 999999} {
		addr := genAddress(g)
		if got, ok := addressGen(addr); !ok || got != g {
			t.Errorf("addressGen(genAddress(%d) = %q) = %d, %v", g, addr, got, ok)
		}
		if other, dup := seen[addr]; dup {
			t.Errorf("generations %d and %d share %s", other, g, addr)
		}
		seen[addr] = g
	}
	for _, addr := range []string{"10.0.0.1", "172.15.0.1", "172.32.0.1", "172.16.0.0", "172.16.250.1", "::1", "svc"} {
		if g, ok := addressGen(addr); ok {
			t.Errorf("addressGen(%q) = %d, want no generation", addr, g)
		}
	}
}

func TestServiceOfCluster(t *testing.T) {
	for name, want := range map[string]int{clusterName(0): 0, clusterName(12345): 12345} {
		if got, ok := serviceOfCluster(name); !ok || got != want {
			t.Errorf("serviceOfCluster(%q) = %d, %v", name, got, ok)
		}
	}
	// Another namespace than Service i's is not the benchmark's.
	for _, name := range []string{"churn-1/svc-2/443", "churn-2/svc-2/80", "tlsplane", "churn-0/svc-x/443"} {
		if got, ok := serviceOfCluster(name); ok {
			t.Errorf("serviceOfCluster(%q) = %d", name, got)
		}
	}
}

func TestArrivals(t *testing.T) {
	a := newArrivals()
	t0 := time.Unix(1000, 0)
	a.sent(7, 1, t0)
	a.sent(7, 2, t0.Add(10*time.Millisecond))
	a.sent(8, 1, t0)
	a.sent(9, 1, t0)
	a.failed(9, 1)
	a.served(7, 0, t0.Add(time.Millisecond)) // an older state applies nothing
	if got := a.outstanding(); got != 3 {
		t.Fatalf("outstanding = %d, want 3", got)
	}
	// A later generation carries the earlier update too.
	a.served(7, 2, t0.Add(100*time.Millisecond))
	if got, want := a.sorted(), []time.Duration{90 * time.Millisecond, 100 * time.Millisecond}; len(got) != 2 || got[0] != want[0] || got[1] != want[1] {
		t.Errorf("latencies %v, want %v", got, want)
	}
	if got := a.outstanding(); got != 1 {
		t.Errorf("outstanding = %d, want 1 (Service 8)", got)
	}
	// Each update is applied once, with its own write time.
	applied := a.appliedUpdates()
	slices.SortFunc(applied, func(x, y appliedUpdate) int { return x.gen - y.gen })
	if len(applied) != 2 || applied[0].gen != 1 || !applied[0].sent.Equal(t0) || applied[1].gen != 2 ||
		!applied[1].sent.Equal(t0.Add(10*time.Millisecond)) || !applied[1].at.Equal(t0.Add(100*time.Millisecond)) {
		t.Errorf("applied %+v", applied)
	}
}

func TestServedAll(t *testing.T) {
	a := newArrivals()
	a.served(0, 0, time.Now()) // generation 0 counts as served
	a.served(1, 3, time.Now())
	for _, tc := range []struct {
		gens []int
		want bool
	}{{[]int{0, 2}, true}, {[]int{0, 3}, true}, {[]int{0, 4}, false}, {[]int{1, 0}, false}, {[]int{0, 0, 0}, false}} {
		if got := a.servedAll(tc.gens); got != tc.want {
			t.Errorf("servedAll(%v) = %v, want %v", tc.gens, got, tc.want)
		}
	}
}

func TestPercentile(t *testing.T) {
	var d []time.Duration
	for i := 1; i <= 100; i++ {
		d = append(d, time.Duration(i)*time.Millisecond)
	}
	for p, want := range map[int]time.Duration{50: 50 * time.Millisecond, 99: 99 * time.Millisecond, 100: 100 * time.Millisecond} {
		if got := percentile(d, p); got != want {
			t.Errorf("p%d = %v, want %v", p, got, want)
		}
	}
	if got := percentile(nil, 99); got != 0 {
		t.Errorf("p99 of nothing = %v", got)
	}
}

// /proc/PID/stat read as cpuTime agrees with the kernel's own account of
// this process (getrusage), within a few clock ticks.
func TestCPUTimeOfThisProcess(t *testing.T) {
	for end := time.Now().Add(100 * time.Millisecond); time.Now().Before(end); {
	}
	got, err := cpuTime(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		t.Fatal(err)
	}
	want := time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	if d := want - got; d < -3*clockTick || d > 3*clockTick || got == 0 {
		t.Errorf("cpuTime = %v, getrusage says %v", got, want)
	}
}
