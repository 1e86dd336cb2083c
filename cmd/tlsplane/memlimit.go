package main

import (
	"log/slog"
	"os"
	"runtime/debug"
	"strconv"
	"strings"
)

// cgroupMemoryFiles hold the container's memory limit: cgroup v2, then v1.
var cgroupMemoryFiles = []string{"/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"}

// applyMemoryLimit sets Go's soft memory limit to 90% of the container's
// (cgroup) memory limit, unless GOMEMLIMIT says otherwise: near the limit
// the garbage collector then runs harder instead of the kernel killing
// the process (the chart sets 512Mi).
func applyMemoryLimit(logger *slog.Logger) {
	if os.Getenv("GOMEMLIMIT") != "" {
		logger.Info("Go memory limit from GOMEMLIMIT", "bytes", debug.SetMemoryLimit(-1))
		return
	}
	for _, path := range cgroupMemoryFiles {
		data, err := os.ReadFile(path)
		if err != nil {
			continue
		}
		if limit, ok := cgroupMemoryLimit(string(data)); ok {
			debug.SetMemoryLimit(limit / 10 * 9)
			logger.Info("Go memory limit: 90% of the cgroup's memory limit (GOMEMLIMIT overrides it)", "cgroupLimit", limit, "goMemLimit", limit/10*9, "file", path)
		}
		return
	}
}

// cgroupMemoryLimit reads memory.max or memory.limit_in_bytes: "max", or
// v1's page-rounded huge number, is no limit.
func cgroupMemoryLimit(content string) (int64, bool) {
	v, err := strconv.ParseInt(strings.TrimSpace(content), 10, 64)
	if err != nil || v <= 0 || v >= 1<<62 {
		return 0, false
	}
	return v, true
}
