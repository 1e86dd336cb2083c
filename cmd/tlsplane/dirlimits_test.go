package main

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tlsplane/tlsplane/manifests"
)

// The limits are flags of serve and translate alike, written as
// quantities, above 0.
func TestDirLimitFlags(t *testing.T) {
	cfg, err := parseServeFlags([]string{"--dir", ".", "--dir-max-file-bytes", "1Gi", "--dir-max-total-bytes=3000000", "--dir-max-alias-bytes", "64Ki"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if want := (manifests.Limits{FileBytes: 1 << 30, TotalBytes: 3000000, AliasBytes: 64 << 10, CRDChannel: "standard"}); *cfg.dirLimits != want {
		t.Errorf("limits %+v, want %+v", *cfg.dirLimits, want)
	}
	// A directory is admitted against the CRDs of --gateway-api-channel,
	// the cluster's (standard by default).
	defaults := manifests.DefaultLimits
	defaults.CRDChannel = "standard"
	if cfg, err := parseServeFlags([]string{"--dir", "."}, io.Discard); err != nil || *cfg.dirLimits != defaults {
		t.Errorf("default limits %+v, %v; want %+v", cfg.dirLimits, err, defaults)
	}
	if cfg, err := parseServeFlags([]string{"--dir", ".", "--gateway-api-channel", "experimental"}, io.Discard); err != nil || cfg.dirLimits.CRDChannel != "experimental" {
		t.Errorf("--gateway-api-channel experimental: %v, %+v", err, cfg)
	}
	for _, bad := range []string{"0", "-1Mi", "lots", "0.5"} {
		if _, err := parseServeFlags([]string{"--dir", ".", "--dir-max-total-bytes", bad}, io.Discard); err == nil || !strings.Contains(err.Error(), "dir-max-total-bytes") {
			t.Errorf("--dir-max-total-bytes %s: %v, want an error naming the flag", bad, err)
		}
	}
	var help bytes.Buffer
	if _, err := parseServeFlags([]string{"--help"}, &help); err == nil || !strings.Contains(help.String(), "--dir-max-file-bytes BYTES") || !strings.Contains(help.String(), "(default 256Mi)") {
		t.Errorf("serve --help: %v, want the limits and their defaults:\n%s", err, help.String())
	}

	// translate: files of 1 KiB, within each limit but not together.
	dir := t.TempDir()
	for i := range 4 {
		doc := fmt.Sprintf("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: cm-%d, namespace: shop}\n#", i)
		doc += strings.Repeat("x", 1<<10-len(doc)-1) + "\n"
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("cm-%d.yaml", i)), []byte(doc), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	var stdout, stderr bytes.Buffer
	if err := runTranslate([]string{dir, "--dir-max-total-bytes", "4Ki"}, &stdout, &stderr); err != nil {
		t.Errorf("translate within the total: %v", err)
	}
	err = runTranslate([]string{dir, "--dir-max-total-bytes", "3Ki"}, &stdout, &stderr)
	if want := filepath.Join(dir, "cm-3.yaml") + ": its 1 KiB would take the manifests read to 4 KiB, over --dir-max-total-bytes (3 KiB); raise it to read this file"; err == nil || err.Error() != want {
		t.Errorf("translate over the total: %v, want %q", err, want)
	}
}
