package main

import (
	"bytes"
	"strings"
	"testing"
)

func TestCaptureDryRun(t *testing.T) {
	for _, tc := range []struct {
		args    []string
		want    []string // lines printed
		wantErr string
	}{
		{[]string{"--dry-run"}, []string{"meta skuid 1337 return", "ip daddr 127.0.0.0/8 return", "meta l4proto tcp redirect to :15001"}, ""},
		{[]string{"--dry-run", "--sidecar-uid", "2000", "--port", "16001", "--exclude-ports", "22, 8443"},
			[]string{"meta skuid 2000 return", "tcp dport 22 return", "tcp dport 8443 return", "redirect to :16001"}, ""},
		{[]string{"--dry-run", "--exclude-ports", "22,ssh"}, nil, `--exclude-ports: "ssh" is not a port`},
		{[]string{"--dry-run", "--exclude-ports", "70000"}, nil, `"70000" is not a port`},
		{[]string{"--dry-run", "--port", "70000"}, nil, "--port 70000"},
		{[]string{"--dry-run", "--sidecar-uid", "0"}, nil, "sidecar UID 0"},
		{[]string{"--dry-run", "extra"}, nil, "unexpected arguments"},
	} {
		var out bytes.Buffer
		err := runCapture(tc.args, &out)
		if tc.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("%q: %v, want an error containing %q", tc.args, err, tc.wantErr)
			}
			continue
		}
		if err != nil {
			t.Errorf("%q: %v", tc.args, err)
			continue
		}
		for _, w := range tc.want {
			if !strings.Contains(out.String(), w) {
				t.Errorf("%q printed no %q:\n%s", tc.args, w, out.String())
			}
		}
	}
}
