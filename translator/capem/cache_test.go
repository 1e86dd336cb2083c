package capem

import (
	"strings"
	"testing"
	"unsafe"

	"k8s.io/apimachinery/pkg/types"

	"github.com/tlsplane/tlsplane/translator/translatortest"
)

// A bundle written with text between its blocks is not canonical, so each
// parse of it makes a new PEM string: two results sharing their bytes were
// parsed once.
const annotated = "# Issuer: one\n" + translatortest.CA

func key(name string) Key {
	return Key{Kind: "ConfigMap", Name: types.NamespacedName{Namespace: name, Name: "kube-root-ca.crt"}}
}

func sameBytes(a, b string) bool { return unsafe.StringData(a) == unsafe.StringData(b) }

func TestCacheParsesOneBundleOnceAcrossObjects(t *testing.T) {
	c := NewCache()
	a, notAfterA, err := Parse(c, key("a"), "1", annotated)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(a, "#") {
		t.Fatalf("not normalised: %q", a)
	}
	b, notAfterB, err := Parse(c, key("b"), "7", []byte(annotated))
	if err != nil {
		t.Fatal(err)
	}
	if a != b || !notAfterA.Equal(notAfterB) {
		t.Fatalf("the same bytes in two objects gave %q (%s) and %q (%s)", a, notAfterA, b, notAfterB)
	}
	if !sameBytes(a, b) {
		t.Error("the second object's equal bundle was parsed again")
	}

	// The next translation: an object met for the first time finds the
	// bytes the last one parsed.
	c.Done()
	d, _, err := Parse(c, key("d"), "3", annotated)
	if err != nil {
		t.Fatal(err)
	}
	if !sameBytes(a, d) {
		t.Error("a bundle parsed in the last translation was parsed again")
	}

	// Other bytes under a known key are parsed, not taken from the key.
	other, _, err := Parse(c, key("a"), "2", translatortest.CA2)
	if err != nil {
		t.Fatal(err)
	}
	if other == a {
		t.Fatal("an edited bundle kept its old result")
	}

	// Two translations that do not use the bytes forget them.
	c.Done()
	c.Done()
	e, _, err := Parse(c, key("e"), "1", annotated)
	if err != nil {
		t.Fatal(err)
	}
	if e != a || sameBytes(a, e) {
		t.Errorf("after two translations without it, the bundle gave %q, shared %v; want it parsed anew", e, sameBytes(a, e))
	}
}

func TestCacheKeepsABundlesErrorForEveryObject(t *testing.T) {
	c := NewCache()
	_, _, errA := Parse(c, key("a"), "1", "not a certificate\n")
	_, _, errB := Parse(c, key("b"), "1", "not a certificate\n")
	if errA == nil || errB == nil || errA.Error() != errB.Error() {
		t.Fatalf("errors %v and %v, want the same error for both objects", errA, errB)
	}
}
