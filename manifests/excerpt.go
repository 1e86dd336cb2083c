package manifests

import (
	"fmt"
	"unicode/utf8"
)

// MaxExcerptBytes bounds how much of one input value (a name, a kind, a
// field's value) a message quotes: enough to recognise it, while a
// 200 KB name makes a message of a few hundred bytes, not of 200 KB.
const MaxExcerptBytes = 256

// maxErrorExcerptBytes bounds a decoder's error text, which may quote the
// input it choked on (`parsing time "…"`); its own words fit well within.
const maxErrorExcerptBytes = 1024

// Excerpt is s as a message quotes it: whole when within MaxExcerptBytes,
// else its first bytes (cut on a rune boundary) and its length, as in
// `aaaa…(200000 bytes)`.
func Excerpt(s string) string { return excerpt(s, MaxExcerptBytes) }

// excerptError is a decoder error's text, bounded.
func excerptError(err error) string { return excerpt(err.Error(), maxErrorExcerptBytes) }

func excerpt(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return fmt.Sprintf("%s…(%d bytes)", s[:cut], len(s))
}
