package kubechurn

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"
)

// clockTick is USER_HZ, the unit of /proc/PID/stat's CPU times: 100 on
// every Linux architecture Go supports (sysconf(_SC_CLK_TCK) needs cgo).
const clockTick = 10 * time.Millisecond

// cpuTime is a process's user + system CPU time so far, from /proc/PID/stat
// (fields 14 and 15, counted after the parenthesised command name, which
// may hold spaces).
func cpuTime(pid int) (time.Duration, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	s := string(b)
	end := strings.LastIndexByte(s, ')')
	if end < 0 {
		return 0, fmt.Errorf("/proc/%d/stat: no command name", pid)
	}
	// Fields after ")" start at field 3 (state); utime is 14, stime 15.
	f := strings.Fields(s[end+1:])
	if len(f) < 13 {
		return 0, fmt.Errorf("/proc/%d/stat: %d fields after the command name", pid, len(f))
	}
	utime, err1 := strconv.ParseInt(f[11], 10, 64)
	stime, err2 := strconv.ParseInt(f[12], 10, 64)
	if err1 != nil || err2 != nil {
		return 0, fmt.Errorf("/proc/%d/stat: utime %q stime %q", pid, f[11], f[12])
	}
	return time.Duration(utime+stime) * clockTick, nil
}

// cpuMeter is the CPU time of named processes between start and stop.
type cpuMeter struct {
	pids  map[string]int
	start map[string]time.Duration
	began time.Time
}

func startCPU(pids map[string]int) (*cpuMeter, error) {
	m := &cpuMeter{pids: pids, start: map[string]time.Duration{}, began: time.Now()}
	for name, pid := range pids {
		t, err := cpuTime(pid)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		m.start[name] = t
	}
	return m, nil
}

// percentOfCore is each process's CPU since start as a percentage of one
// core over the same wall time.
func (m *cpuMeter) percentOfCore() (map[string]float64, time.Duration, error) {
	wall := time.Since(m.began)
	out := map[string]float64{}
	for name, pid := range m.pids {
		t, err := cpuTime(pid)
		if err != nil {
			return nil, 0, fmt.Errorf("%s: %w", name, err)
		}
		out[name] = 100 * float64(t-m.start[name]) / float64(wall)
	}
	return out, wall, nil
}
