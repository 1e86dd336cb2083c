package xbackend_test

import (
	"strings"
	"testing"

	gwxv1a1 "sigs.k8s.io/gateway-api/apisx/v1alpha1"

	"github.com/tlsplane/tlsplane/translator/backendtls"
	"github.com/tlsplane/tlsplane/translator/xbackend"
)

func TestParseHostnames(t *testing.T) {
	h, err := xbackend.ParseHostnames(" api.pay.example, *.Partner.Example. ,", "--xbackend-hostnames")
	if err != nil {
		t.Fatal(err)
	}
	for host, want := range map[string]bool{
		"api.pay.example":       true,
		"API.Pay.Example.":      true,
		"www.api.pay.example":   false, // an exact entry covers no subdomain
		"pay.example":           false,
		"a.partner.example":     true,
		"a.b.partner.example":   true, // a wildcard covers one or more labels
		"partner.example":       false,
		"evilpartner.example":   false,
		"a.partner.example.com": false,
	} {
		if got := h.Allows(host); got != want {
			t.Errorf("Allows(%q) = %v, want %v", host, got, want)
		}
	}
	if got := h.String(); got != "api.pay.example,*.partner.example" {
		t.Errorf("String() = %q", got)
	}
	if h, err := xbackend.ParseHostnames(" , ", "--xbackend-hostnames"); h != nil || err != nil || !h.Allows("anything.example") {
		t.Errorf("an empty list: %v, %v; want nil (every name), no error", h, err)
	}
	for _, bad := range []string{"*", "*.", "a.*.example", "pay..example", "*pay.example", strings.Repeat("a", 64) + ".example"} {
		if _, err := xbackend.ParseHostnames("ok.example,"+bad, "--xbackend-hostnames"); err == nil || !strings.Contains(err.Error(), "--xbackend-hostnames: ") {
			t.Errorf("ParseHostnames(%q): error %v, want one naming the flag", bad, err)
		}
	}
}

// An XBackend whose hostname is off the operator's list is refused,
// naming the hostname, the flag and the list; one on it is accepted.
func TestJudgeHonoursTheHostnameAllowList(t *testing.T) {
	allowed, err := xbackend.ParseHostnames("*.pay.example", "--xbackend-hostnames")
	if err != nil {
		t.Fatal(err)
	}
	ix := index(t)
	c := cfg
	c.Hostnames = allowed
	on := xbackend.Judge(backend(nil), ix, c, backendtls.Memos{})
	if !on.Accepted() {
		t.Errorf("api.pay.example refused under *.pay.example: %s", on.RejectMessage)
	}
	x := backend(func(x *gwxv1a1.XBackend) { x.Spec.ExternalHostname.Hostname = "api.elsewhere.example" })
	off := xbackend.Judge(x, ix, c, backendtls.Memos{})
	want := `XBackend shop/pay: spec.externalHostname.hostname: "api.elsewhere.example" is not among the hostnames this control plane allows (--xbackend-hostnames *.pay.example)`
	if off.Accepted() || off.RejectReason != xbackend.ReasonInvalid || off.RejectMessage != want {
		t.Errorf("off the list: reason %q, message %q; want Invalid, %q", off.RejectReason, off.RejectMessage, want)
	}
	if v := xbackend.Judge(x, ix, cfg, backendtls.Memos{}); !v.Accepted() {
		t.Errorf("without a list every external name is allowed: %s", v.RejectMessage)
	}
	// A loopback name is refused unless the list names it (a local demo).
	local := backend(func(x *gwxv1a1.XBackend) { x.Spec.ExternalHostname.Hostname = "localhost" })
	if v := xbackend.Judge(local, ix, c, backendtls.Memos{}); v.Accepted() || !strings.Contains(v.RejectMessage, "is a loopback name") {
		t.Errorf("localhost under *.pay.example: accepted %v, %q; want the loopback refusal", v.Accepted(), v.RejectMessage)
	}
	named, err := xbackend.ParseHostnames("localhost", "--xbackend-hostnames")
	if err != nil {
		t.Fatal(err)
	}
	c.Hostnames = named
	if v := xbackend.Judge(local, ix, c, backendtls.Memos{}); !v.Accepted() {
		t.Errorf("localhost named by the list refused: %s", v.RejectMessage)
	}
}
