package main

import (
	"bytes"
	"errors"
	"flag"
	"slices"
	"strings"
	"testing"
)

func TestParseFlagsAnywhere(t *testing.T) {
	for _, c := range []struct {
		args      []string
		wantPos   []string
		wantO     string
		wantAllow bool
	}{
		{[]string{"-o", "json", "a"}, []string{"a"}, "json", false},
		{[]string{"a", "-o", "json"}, []string{"a"}, "json", false},
		{[]string{"a", "--o=json", "b", "--allow"}, []string{"a", "b"}, "json", true},
		{[]string{"a", "--", "-o", "b"}, []string{"a", "-o", "b"}, "yaml", false},
		{[]string{"-o", "--", "a"}, []string{"a"}, "--", false},
		{[]string{"--allow", "--", "-x"}, []string{"-x"}, "yaml", true},
		{nil, nil, "yaml", false},
	} {
		fs := flag.NewFlagSet("t", flag.ContinueOnError)
		o := fs.String("o", "yaml", "")
		allow := fs.Bool("allow", false, "")
		pos, err := parseFlags(fs, c.args)
		if err != nil {
			t.Errorf("%q: %v", c.args, err)
			continue
		}
		if !slices.Equal(pos, c.wantPos) || *o != c.wantO || *allow != c.wantAllow {
			t.Errorf("%q: positional %q, -o %q, --allow %v; want %q, %q, %v", c.args, pos, *o, *allow, c.wantPos, c.wantO, c.wantAllow)
		}
	}
	fs := flag.NewFlagSet("t", flag.ContinueOnError)
	if _, err := parseFlags(fs, []string{"a", "--nope"}); err == nil || !strings.Contains(err.Error(), "nope") {
		t.Errorf("an unknown flag after a path: %v, want an error naming it", err)
	}
	if _, err := parseFlags(fs, []string{"a", "--help"}); !errors.Is(err, flag.ErrHelp) {
		t.Errorf("--help after a path: %v, want flag.ErrHelp", err)
	}
}

// Every flag of serve and translate appears in exactly one help group, so
// a new flag cannot be missing from --help.
func TestHelpGroupsComplete(t *testing.T) {
	_, fs := newServeFlags()
	if err := helpGroupsComplete(fs, serveFlagGroups); err != nil {
		t.Errorf("serve: %v", err)
	}
	var stdout, stderr bytes.Buffer
	if err := runTranslate([]string{"--help"}, &stdout, &stderr); err != nil {
		t.Fatal(err)
	}
	if stderr.Len() != 0 {
		t.Errorf("translate --help wrote to stderr: %s", stderr.String())
	}
	for _, want := range []string{"Usage: tlsplane translate", "\n  -o string", "\n  --controller-name string", "\n  --listener-address IP", "\n  --allow-insecure-skip-verify\n"} {
		if !strings.Contains(stdout.String(), want) {
			t.Errorf("translate --help lacks %q:\n%s", want, stdout.String())
		}
	}
}

func TestServeHelpGoesToStdoutGrouped(t *testing.T) {
	var stdout bytes.Buffer
	_, err := parseServeFlags([]string{"--help"}, &stdout)
	if !errors.Is(err, flag.ErrHelp) {
		t.Fatalf("serve --help: %v, want flag.ErrHelp", err)
	}
	out := stdout.String()
	last := -1
	for _, want := range []string{"Source (exactly one):", "\n  --dir string", "xDS and admin:", "\n  --xds-address string",
		"Security of the xDS channel:", "\n  --xds-tls-cert", "Kubernetes mode:", "\n  --leader-elect\n", "(default true)", "Logging:", "\n  --log-level string"} {
		i := strings.Index(out, want)
		if i < 0 || i < last {
			t.Errorf("serve --help: %q missing or out of order:\n%s", want, out)
		}
		last = max(last, i)
	}
	if strings.Contains(out, "\n  -dir") || strings.Contains(out, "tlsplane translate") {
		t.Errorf("serve --help: single-dash flags or the top-level usage:\n%s", out)
	}
}
