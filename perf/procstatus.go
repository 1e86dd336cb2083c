package perf

import (
	"bufio"
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// procStatusBytes reads a "kB" field of /proc/self/status.
func procStatusBytes(field string) (int64, error) {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return 0, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		rest, ok := strings.CutPrefix(sc.Text(), field)
		if !ok {
			continue
		}
		kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 10, 64)
		if err != nil {
			return 0, fmt.Errorf("/proc/self/status %s %w", field, err)
		}
		return kb << 10, nil
	}
	return 0, fmt.Errorf("/proc/self/status: no %s", field)
}

// writtenBytes is what this process has written with write(2) and its
// kin (sockets included), from /proc/self/io.
func writtenBytes() (int64, error) {
	b, err := os.ReadFile("/proc/self/io")
	if err != nil {
		return 0, err
	}
	for line := range strings.Lines(string(b)) {
		if rest, ok := strings.CutPrefix(line, "wchar:"); ok {
			return strconv.ParseInt(strings.TrimSpace(rest), 10, 64)
		}
	}
	return 0, fmt.Errorf("/proc/self/io: no wchar")
}

// syscallCounts is how many read(2) and write(2) calls (and their kin,
// sockets included) this process has made, from /proc/self/io: the
// transport's flushes and reads, per stream, without a profiler.
func syscallCounts() (reads, writes int64, err error) {
	b, err := os.ReadFile("/proc/self/io")
	if err != nil {
		return 0, 0, err
	}
	var found int
	for line := range strings.Lines(string(b)) {
		field, value, ok := strings.Cut(line, ":")
		if !ok || (field != "syscr" && field != "syscw") {
			continue
		}
		n, err := strconv.ParseInt(strings.TrimSpace(value), 10, 64)
		if err != nil {
			return 0, 0, fmt.Errorf("/proc/self/io %s: %w", field, err)
		}
		if field == "syscr" {
			reads = n
		} else {
			writes = n
		}
		found++
	}
	if found != 2 {
		return 0, 0, fmt.Errorf("/proc/self/io: no syscr or syscw")
	}
	return reads, writes, nil
}

// vmHWM is this process's peak resident memory in bytes, from /proc.
func vmHWM() (int64, error) {
	return procStatusBytes("VmHWM:")
}

// cpuTime is the CPU time this process has used, user and system, all
// threads: what a replica pays, whichever goroutine did the work.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// fileMargin is the descriptors a fan-out process needs besides one per
// connection: standard streams, the listener, the epoll instance, pipes to
// and from the child, /proc reads.
const fileMargin = 64

// ensureFiles makes room for conns connections in this process: the soft
// RLIMIT_NOFILE is raised to what they need (Go already raises it to the
// hard limit at start; the hard limit itself only a privileged process can
// raise, up to fs.nr_open). It says why it cannot.
func ensureFiles(conns int) error {
	need := uint64(conns + fileMargin)
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		return err
	}
	if lim.Cur >= need {
		return nil
	}
	raised := syscall.Rlimit{Cur: need, Max: max(lim.Max, need)}
	if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &raised); err != nil {
		return fmt.Errorf("%d connections need %d file descriptors; RLIMIT_NOFILE is %d (hard %d) and raising it failed (%v): raise `ulimit -Hn` or use fewer streams", conns, need, lim.Cur, lim.Max, err)
	}
	return nil
}

// resetPeakRSS starts VmHWM over from the current resident memory (Linux
// 4.0+), so that a benchmark's peak is its own, not an earlier one's in
// the same process.
func resetPeakRSS() error {
	return os.WriteFile("/proc/self/clear_refs", []byte("5"), 0)
}
