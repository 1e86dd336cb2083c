package tlsopts

import (
	"strings"
	"testing"
)

// The keys isOptionName lets skip the key pattern are all valid keys.
func TestOptionNamesMatchKeyPattern(t *testing.T) {
	for _, name := range optionNames() {
		key := Prefix + name
		if !isOptionName(key) {
			t.Errorf("%s: not recognised by isOptionName", key)
		}
		if !optionKeyPattern.MatchString(key) || len(key) > maxOptionKeyBytes {
			t.Errorf("%s: does not match Gateway API's key pattern", key)
		}
	}
	if isOptionName(strings.ToUpper(Prefix) + "ciphers") {
		t.Error("isOptionName accepts a key that is not tlsplane's")
	}
}
