package main

import (
	"errors"
	"io"
)

// runTranslate is replaced by the translator work (issue 2).
func runTranslate(args []string, stdout, stderr io.Writer) error {
	return errors.New("not built yet")
}
