package tlsopts

import (
	"fmt"
	"strings"
)

// unknownName is the error for a name a list option does not take: the
// canonical spelling when name is an alias, the known name when only the
// case differs, else notTaken followed by hint. notTaken reads after the
// quoted name ("is not a curve tlsplane offers").
func unknownName[T any](name string, aliases map[string]string, known []T, nameOf func(T) string, notTaken, hint string) error {
	if canonical, ok := aliases[name]; ok {
		return fmt.Errorf("%s is spelled %q here", quoteValue(name), canonical)
	}
	for _, k := range known {
		if strings.EqualFold(name, nameOf(k)) {
			return fmt.Errorf("%s %s: did you mean %q?", quoteValue(name), notTaken, nameOf(k))
		}
	}
	return fmt.Errorf("%s %s%s", quoteValue(name), notTaken, hint)
}
