package manifests

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation/field"
)

// Refusal is one object of a file refused as the API server would refuse
// it: which object, which field, and the API server's message for it
// (field.Error's ErrorBody, without the path). Line is the 1-based line
// in the file of that field, or of its deepest ancestor the file has (0
// when unknown).
type Refusal struct {
	File                                              string
	Line                                              int
	APIVersion, Kind, Namespace, Name, Field, Message string
	// steps is Field as keys and indexes from the document's root, for
	// finding Line.
	steps []pathStep
}

func (r Refusal) String() string {
	id := r.Name
	if r.Namespace != "" {
		id = r.Namespace + "/" + r.Name
	}
	loc := r.File
	if r.Line > 0 {
		loc = fmt.Sprintf("%s:%d", r.File, r.Line)
	}
	if r.Field == "" {
		return fmt.Sprintf("%s: %s %s: %s", loc, r.Kind, id, r.Message)
	}
	return fmt.Sprintf("%s: %s %s: %s: %s", loc, r.Kind, id, r.Field, r.Message)
}

// RefusedError is a file refused as a whole because of the objects in it
// the API server would refuse: every one of them, in file order, each
// field error its own Refusal. Parse's error is one (errors.As) when
// nothing else was wrong with the file.
type RefusedError struct{ Refusals []Refusal }

// Error is one line per refusal: "file:line: Kind ns/name: field: message".
func (e *RefusedError) Error() string {
	lines := make([]string, len(e.Refusals))
	for i, r := range e.Refusals {
		lines[i] = r.String()
	}
	return strings.Join(lines, "\n")
}

// objectID names the object refusals are about.
type objectID struct{ file, apiVersion, kind, namespace, name string }

// refusals turns the API server's field errors about one object into
// Refusals; prefix is where the object sits in its document (a List's
// item), for Line. Values are quoted up to MaxExcerptBytes.
func refusals(id objectID, prefix []pathStep, errs field.ErrorList) *RefusedError {
	out := &RefusedError{}
	for _, e := range errs {
		if s, ok := e.BadValue.(string); ok && len(s) > maxErrorExcerptBytes {
			e.BadValue = Excerpt(s) // the schema's checks quote values whole
		}
		path := e.Field
		if path == "<nil>" {
			path = "" // about the whole object (the CEL rules skipped)
		}
		out.Refusals = append(out.Refusals, Refusal{
			File: id.file, APIVersion: Excerpt(id.apiVersion), Kind: Excerpt(id.kind), Namespace: Excerpt(id.namespace), Name: Excerpt(id.name),
			Field:   excerpt(path, maxErrorExcerptBytes),
			Message: excerpt(e.ErrorBody(), maxErrorExcerptBytes),
			steps:   append(append([]pathStep(nil), prefix...), fieldSteps(path)...),
		})
	}
	return out
}
