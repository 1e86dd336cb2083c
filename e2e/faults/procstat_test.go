package faults

import (
	"bufio"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"
)

// procSampler records, every interval, a process's open file descriptors
// (/proc/PID/fd) and resident memory (VmRSS), and keeps the peaks.
type procSampler struct {
	pid     int
	mu      sync.Mutex
	peakFDs int
	peakRSS int64 // bytes
	// firstFDs and firstRSS are the first sample's: before the load.
	firstFDs int
	firstRSS int64
	samples  int
	errors   []string
	stopOnce sync.Once
	stopped  chan struct{}
	done     chan struct{}
}

func sampleProcess(pid int, interval time.Duration) *procSampler {
	s := &procSampler{pid: pid, stopped: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(s.done)
		tick := time.NewTicker(interval)
		defer tick.Stop()
		for {
			s.sample()
			select {
			case <-s.stopped:
				return
			case <-tick.C:
			}
		}
	}()
	return s
}

func (s *procSampler) sample() {
	fds, err := os.ReadDir(fmt.Sprintf("/proc/%d/fd", s.pid))
	rss, rerr := vmRSS(s.pid)
	s.mu.Lock()
	defer s.mu.Unlock()
	if err != nil || rerr != nil {
		if len(s.errors) < 5 {
			s.errors = append(s.errors, fmt.Sprint(err, rerr))
		}
		return
	}
	if s.samples == 0 {
		s.firstFDs, s.firstRSS = len(fds), rss
	}
	s.samples++
	s.peakFDs = max(s.peakFDs, len(fds))
	s.peakRSS = max(s.peakRSS, rss)
}

// stop ends the sampling and returns the peaks.
func (s *procSampler) stop() (peakFDs int, peakRSS int64, samples int, errs []string) {
	s.stopOnce.Do(func() { close(s.stopped) })
	<-s.done
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.peakFDs, s.peakRSS, s.samples, s.errors
}

// vmRSS is /proc/PID/status's VmRSS in bytes.
func vmRSS(pid int) (int64, error) {
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), "VmRSS:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 10, 64)
			return kb << 10, err
		}
	}
	return 0, fmt.Errorf("/proc/%d/status: no VmRSS", pid)
}

// fileLimitOf is the soft RLIMIT_NOFILE of pid, from /proc/PID/limits.
func fileLimitOf(pid int) (int, error) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/limits", pid))
	if err != nil {
		return 0, err
	}
	for _, line := range strings.Split(string(data), "\n") {
		if rest, ok := strings.CutPrefix(line, "Max open files"); ok {
			fields := strings.Fields(rest)
			if len(fields) > 0 {
				return strconv.Atoi(fields[0])
			}
		}
	}
	return 0, fmt.Errorf("/proc/%d/limits: no Max open files", pid)
}
