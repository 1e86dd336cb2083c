package node

import (
	"bufio"
	"bytes"
	"net/url"
	"strings"
	"testing"
	"time"
)

// A container's output becomes lines stamped with their time and stream,
// however the writes split them.
func TestContainerLogKeepsLines(t *testing.T) {
	l := newContainerLog()
	out, errs := l.writer(stdout), l.writer(stderr)
	out.Write([]byte("Echoing back request made to /mir"))
	errs.Write([]byte("warning\n"))
	out.Write([]byte("ror to client\nsecond\nunfinished"))
	lines, next, _ := l.from(0)
	got := []string{}
	for _, line := range lines {
		got = append(got, streamNames[line.stream]+":"+string(line.text))
	}
	want := []string{"Stderr:warning", "Stdout:Echoing back request made to /mirror to client", "Stdout:second"}
	if strings.Join(got, "|") != strings.Join(want, "|") || next != 3 {
		t.Fatalf("lines = %q (next %d), want %q (next 3)", got, next, want)
	}
	if more, _, _ := l.from(next); len(more) != 0 {
		t.Fatalf("from(next) = %d lines, want none", len(more))
	}
}

// The newest maxLogBytes are kept; older lines go first.
func TestContainerLogIsBounded(t *testing.T) {
	l := newContainerLog()
	line := bytes.Repeat([]byte("x"), 1023)
	for range 2 * maxLogBytes / 1024 {
		l.writer(stdout).Write(append(line, '\n'))
	}
	lines, next, _ := l.from(0)
	if len(lines) != maxLogBytes/1024 || next != 2*maxLogBytes/1024 {
		t.Fatalf("kept %d lines (next %d), want %d (next %d)", len(lines), next, maxLogBytes/1024, 2*maxLogBytes/1024)
	}
}

// The query parameters the API server passes on from PodLogOptions select
// lines as the kubelet's do.
func TestLogOptions(t *testing.T) {
	base := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	lines := []logLine{
		{at: base, stream: stdout, text: []byte("one")},
		{at: base.Add(2 * time.Second), stream: stderr, text: []byte("two")},
		{at: base.Add(4 * time.Second), stream: stdout, text: []byte("three")},
	}
	for _, tc := range []struct {
		query, want, wantErr string
	}{
		{query: "", want: "one\ntwo\nthree\n"},
		{query: "sinceTime=2026-01-01T00:00:02Z", want: "two\nthree\n"},
		{query: "sinceSeconds=1", want: "three\n"}, // now is base+5s
		{query: "tailLines=1", want: "three\n"},
		{query: "stream=Stderr", want: "two\n"},
		{query: "limitBytes=6", want: "one\ntw"},
		{query: "timestamps=true&tailLines=1", want: "2026-01-01T00:00:04Z three\n"},
		{query: "previous=true", wantErr: "previous"},
		{query: "sinceTime=yesterday", wantErr: "sinceTime"},
		{query: "tailLines=-3", wantErr: "tailLines"},
		{query: "stream=Both", wantErr: "stream"},
	} {
		t.Run(tc.query, func(t *testing.T) {
			q, _ := url.ParseQuery(tc.query)
			o, err := logOptionsOf(q, base.Add(5*time.Second))
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want one naming %s", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			selected := o.tailOf(lines)
			var buf bytes.Buffer
			w := bufio.NewWriter(&buf)
			budget := o.limitBytes
			o.write(w, selected, &budget)
			w.Flush()
			if buf.String() != tc.want {
				t.Fatalf("wrote %q, want %q", buf.String(), tc.want)
			}
		})
	}
}
