package manifests

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// aliasedConfigMap is a ~size-byte file whose one string is anchored once
// and aliased aliases times.
func aliasedConfigMap(size, aliases int) []byte {
	var b strings.Builder
	b.WriteString("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: expands, namespace: shop}\ndata:\n  a0: &big \"")
	b.WriteString(strings.Repeat("x", size))
	b.WriteString("\"\n")
	for i := 1; i <= aliases; i++ {
		fmt.Fprintf(&b, "  a%d: *big\n", i)
	}
	return []byte(b.String())
}

func TestAliasesExpandingBeyondTheBoundAreRefused(t *testing.T) {
	start := time.Now()
	_, err := Parse("m/expands.yaml", aliasedConfigMap(1<<20, 300), nil)
	if err == nil || !strings.Contains(err.Error(), "m/expands.yaml: document 1") || !strings.Contains(err.Error(), "aliases") {
		t.Fatalf("error %v, want one naming the file, the document and its aliases", err)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("refusing took %v", d)
	}

	// The bound is the file's: many documents each under it are refused too.
	var many []byte
	for range 40 {
		many = append(many, "---\n"...)
		many = append(many, aliasedConfigMap(64<<10, 8)...)
	}
	if _, err := Parse("m/many.yaml", many, nil); err == nil || !strings.Contains(err.Error(), "m/many.yaml: document ") {
		t.Fatalf("40 documents of 576 KiB each: error %v, want the file refused", err)
	}

	// The nested form (billion laughs) too.
	laughs := "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: lol}\ndata:\n  x: {}\nl0: &l0 [\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\"]\n"
	for i := 1; i < 10; i++ {
		laughs += fmt.Sprintf("l%d: &l%d [*l%d,*l%d,*l%d,*l%d,*l%d,*l%d,*l%d,*l%d,*l%d,*l%d]\n", i, i, i-1, i-1, i-1, i-1, i-1, i-1, i-1, i-1, i-1, i-1)
	}
	if _, err := Parse("m/laughs.yaml", []byte(laughs), nil); err == nil {
		t.Fatal("billion laughs accepted")
	}
}

func TestAliasesWithinTheBoundAreRead(t *testing.T) {
	in, err := Parse("m/ok.yaml", aliasedConfigMap(1<<10, 10), nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(in.ConfigMaps) != 1 || len(in.ConfigMaps[0].Data) != 11 || in.ConfigMaps[0].Data["a10"] != strings.Repeat("x", 1<<10) {
		t.Fatalf("aliases not expanded: %v", in.ConfigMaps)
	}
}

func TestFilesOverTheBoundAreRefusedUnread(t *testing.T) {
	path := filepath.Join(t.TempDir(), "big.yaml")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(MaxFileBytes + 1); err != nil { // sparse: costs no disk
		t.Fatal(err)
	}
	f.Close()
	if _, err := Read([]string{path}, nil); err == nil || !strings.Contains(err.Error(), path+": file larger than") {
		t.Fatalf("error %v, want the file named and refused", err)
	}
	if _, err := Parse("m/big.yaml", make([]byte, MaxFileBytes+1), nil); err == nil || !strings.Contains(err.Error(), "m/big.yaml: file larger than") {
		t.Fatalf("Parse: error %v, want the file named and refused", err)
	}
}
