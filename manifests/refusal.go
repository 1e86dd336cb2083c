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
	// object is the refused object's identity as written, not excerpted.
	object objectID
}

// Object is the refused object's apiVersion, kind, namespace (the
// request's: the default one for a namespaced object without one, empty
// for a cluster-scoped one) and name, whole, for finding the version of
// it that is served already.
func (r Refusal) Object() (apiVersion, kind, namespace, name string) {
	o := r.object
	return o.apiVersion, o.kind, o.namespace, o.name
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

// RefusedError lists the objects of a file the API server would refuse:
// every one of them, in file order, each field error its own Refusal.
// Parse's error is one (errors.As) when nothing else was wrong with the
// file, and then Parse's Inputs are the file's other objects.
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
		steps := append(append([]pathStep(nil), prefix...), fieldSteps(path)...)
		out.Refusals = append(out.Refusals, id.refusal(path, e.ErrorBody(), steps))
	}
	return out
}

// refusal is one refusal of the object id names: field is its path
// ("" for the whole object), steps where it sits in the document. The
// names, field and message are quoted up to the excerpt bounds.
func (id objectID) refusal(field, message string, steps []pathStep) Refusal {
	return Refusal{
		File: id.file, APIVersion: Excerpt(id.apiVersion), Kind: Excerpt(id.kind), Namespace: Excerpt(id.namespace), Name: Excerpt(id.name),
		Field:   excerpt(field, maxErrorExcerptBytes),
		Message: excerpt(message, maxErrorExcerptBytes),
		steps:   steps,
		object:  id,
	}
}
