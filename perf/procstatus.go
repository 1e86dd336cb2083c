package perf

import (
	"bufio"
	"fmt"
	"os"
	"strconv"
	"strings"
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
