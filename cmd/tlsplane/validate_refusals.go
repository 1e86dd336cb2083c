package main

import (
	"errors"

	"github.com/tlsplane/tlsplane/manifests"
)

// admissionFindings are the objects of a refused file the API server
// would refuse, each at its field's line, from manifests' RefusedError;
// none when err is another kind of error.
func admissionFindings(err error) []finding {
	var refused *manifests.RefusedError
	if !errors.As(err, &refused) {
		return nil
	}
	out := make([]finding, 0, len(refused.Refusals))
	for _, r := range refused.Refusals {
		out = append(out, finding{File: r.File, Line: r.Line, Kind: r.Kind, Namespace: r.Namespace, Name: r.Name, Field: r.Field, Message: r.Message})
	}
	return out
}

// refusedAlone says whether err is the refusal of some objects of a file
// whose others were read (manifests.Parse), not the file's.
func refusedAlone(err error) bool {
	var refused *manifests.RefusedError
	return errors.As(err, &refused)
}
