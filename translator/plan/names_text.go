package plan

import "fmt"

// marshalName and unmarshalName print a small enum by name: plans are
// printed in golden files for people to read.
func marshalName(names []string, v int) ([]byte, error) {
	if v < 0 || v >= len(names) {
		return nil, fmt.Errorf("no name for %d", v)
	}
	return []byte(names[v]), nil
}

func unmarshalName(names []string, b []byte, v *int) error {
	for i, n := range names {
		if n == string(b) {
			*v = i
			return nil
		}
	}
	return fmt.Errorf("%q is none of %q", b, names)
}
