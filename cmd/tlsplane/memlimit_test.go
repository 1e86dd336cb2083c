package main

import "testing"

func TestCgroupMemoryLimit(t *testing.T) {
	for _, c := range []struct {
		content string
		want    int64
		ok      bool
	}{
		{"536870912\n", 536870912, true},
		{"max\n", 0, false},
		{"9223372036854771712\n", 0, false}, // cgroup v1: no limit
		{"", 0, false},
		{"0\n", 0, false},
	} {
		if got, ok := cgroupMemoryLimit(c.content); got != c.want || ok != c.ok {
			t.Errorf("%q: %d, %v; want %d, %v", c.content, got, ok, c.want, c.ok)
		}
	}
}
