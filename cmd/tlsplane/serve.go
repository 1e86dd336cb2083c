package main

import "errors"

// runServe is replaced by the serving work (issue 3).
func runServe(args []string) error {
	return errors.New("not built yet")
}
