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
	limits := Limits{FileBytes: 64 << 10}
	path := filepath.Join(t.TempDir(), "big.yaml")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(DefaultLimits.FileBytes + 1); err != nil { // sparse: costs no disk
		t.Fatal(err)
	}
	f.Close()
	want := path + ": 256.0 MiB is over --dir-max-file-bytes (256 MiB); raise it to read this file"
	if _, err := Read([]string{path}, nil); err == nil || err.Error() != want {
		t.Fatalf("error %v, want %q", err, want)
	}
	want = "m/big.yaml: 64.0 KiB is over --dir-max-file-bytes (64 KiB); raise it to read this file"
	if _, err := limits.Parse("m/big.yaml", make([]byte, 64<<10+1), nil); err == nil || err.Error() != want {
		t.Fatalf("Parse: error %v, want %q", err, want)
	}
}

// A file is bounded by FileBytes and a read's files together by
// TotalBytes; many files each within the first are refused by the second,
// naming the file that would go over and the flag that raises it.
func TestReadBoundsTheFilesTogether(t *testing.T) {
	dir := t.TempDir()
	for i := range 10 {
		var b strings.Builder
		for j := range 40 {
			fmt.Fprintf(&b, "---\napiVersion: v1\nkind: Service\nmetadata: {name: svc-%d-%d, namespace: shop}\nspec:\n  ports: [{name: https, port: 443}]\n", i, j)
		}
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("svc-%d.yaml", i)), []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	in, err := Limits{TotalBytes: 64 << 10}.Read([]string{dir}, nil)
	if err != nil || len(in.Services) != 400 {
		t.Fatalf("within the total: %d Services, %v; want 400", len(in.Services), err)
	}
	_, err = Limits{TotalBytes: 16 << 10}.Read([]string{dir}, nil)
	if err == nil || !strings.Contains(err.Error(), "svc-") || !strings.Contains(err.Error(), "over --dir-max-total-bytes (16 KiB); raise it") {
		t.Fatalf("over the total: error %v, want one naming a file and --dir-max-total-bytes", err)
	}
}

// The alias bound is its own: a large file without aliases costs nothing
// against it, even when its documents hold '*' (wildcard hostnames) and
// flow sequences, whose structure outweighs their text.
func TestAliasBoundChargesOnlyAliases(t *testing.T) {
	doc := "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: hosts, namespace: shop}\ndata:\n  hosts: \"*.shop.example\"\n  list: |\n" +
		strings.Repeat("    [a,b,c,d,e,f,g,h,i,j,k,l,m,n,o,p]\n", 1000)
	var file strings.Builder
	for range 20 {
		file.WriteString("---\n" + doc)
	}
	if _, err := (Limits{AliasBytes: 1 << 10}).Parse("m/hosts.yaml", []byte(file.String()), nil); err != nil {
		t.Fatalf("a file without aliases: %v", err)
	}
	n, err := AliasBytes(aliasedConfigMap(1<<10, 10))
	if err != nil || n < 10<<10 || n > 11<<10 {
		t.Fatalf("AliasBytes of 10 aliases of 1 KiB = %d, %v; want about 10 KiB", n, err)
	}
	_, err = (Limits{AliasBytes: 8 << 10}).Parse("m/ok.yaml", aliasedConfigMap(1<<10, 10), nil)
	if want := "m/ok.yaml: document 1: refused: its YAML aliases expand the file by more than --dir-max-alias-bytes (8 KiB); raise it to read this file"; err == nil || err.Error() != want {
		t.Fatalf("error %v, want %q", err, want)
	}
}
