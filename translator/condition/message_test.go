package condition_test

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/tlsplane/tlsplane/translator/condition"
)

func TestCapMessage(t *testing.T) {
	for _, c := range []struct {
		name string
		in   string
		n    int
		want string
	}{
		{"short stays", "ok", 10, "ok"},
		{"exact stays", "abcde", 5, "abcde"},
		{"cut and marked", "abcdefghij", 6, "abc…"},
		{"not inside a rune", "ééééé", 7, "éé…"}, // é is 2 bytes: 7-3=4 → "éé"
	} {
		got := condition.CapMessage(c.in, c.n)
		if got != c.want {
			t.Errorf("%s: CapMessage(%q, %d) = %q, want %q", c.name, c.in, c.n, got, c.want)
		}
		if len(got) > c.n || !utf8.ValidString(got) {
			t.Errorf("%s: %q is %d bytes (limit %d), valid UTF-8 %v", c.name, got, len(got), c.n, utf8.ValidString(got))
		}
	}
	long := strings.Repeat("x", 64<<10)
	if got := condition.CapMessage(long, condition.MaxConditionMessage); len(got) > condition.MaxConditionMessage {
		t.Errorf("a 64 KiB message capped to %d bytes", len(got))
	}
}
