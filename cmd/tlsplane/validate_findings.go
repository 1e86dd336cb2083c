package main

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"k8s.io/apimachinery/pkg/types"

	"github.com/tlsplane/tlsplane/manifests"
	"github.com/tlsplane/tlsplane/translator"
	"github.com/tlsplane/tlsplane/translator/input"
)

// finding is one refusal validate reports: where it is (File, Line; Line 0
// when no line is known), which object, which field and why.
type finding struct {
	File      string `json:"file,omitempty"`
	Line      int    `json:"line,omitempty"`
	Kind      string `json:"kind,omitempty"`
	Namespace string `json:"namespace,omitempty"`
	Name      string `json:"name,omitempty"`
	Field     string `json:"field,omitempty"`
	Reason    string `json:"reason,omitempty"` // a status condition's reason
	Message   string `json:"message"`
}

// String is the finding's line: FILE:LINE: KIND NAMESPACE/NAME: FIELD: MESSAGE,
// leaving out what is not known.
func (f finding) String() string {
	var parts []string
	switch {
	case f.File != "" && f.Line > 0:
		parts = append(parts, fmt.Sprintf("%s:%d", f.File, f.Line))
	case f.File != "":
		parts = append(parts, f.File)
	}
	if f.Kind != "" {
		parts = append(parts, f.Kind+" "+objectName(types.NamespacedName{Namespace: f.Namespace, Name: f.Name}))
	}
	if f.Field != "" {
		parts = append(parts, f.Field)
	}
	return strings.Join(append(parts, f.Message), ": ")
}

// checkReport is what validate prints.
type checkReport struct {
	Files    int       `json:"files"`
	Objects  int       `json:"objects"`
	Findings []finding `json:"findings"`
}

// The formats validate prints.
const (
	checkText   = "text"
	checkJSON   = "json"
	checkGitHub = "github" // GitHub Actions workflow commands: each finding annotates its file and line
)

func (r checkReport) print(w io.Writer, format string) error {
	if format == checkGitHub {
		for _, f := range r.Findings {
			if _, err := fmt.Fprintln(w, f.githubCommand()); err != nil {
				return err
			}
		}
		return nil
	}
	if format == checkJSON {
		if r.Findings == nil {
			r.Findings = []finding{}
		}
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(r)
	}
	for _, f := range r.Findings {
		if _, err := fmt.Fprintln(w, f.String()); err != nil {
			return err
		}
	}
	return nil
}

// fileFindings are a refused file's findings: one per object the API
// server would refuse, or the file's one error (YAML that does not parse,
// a document that is not an object).
func fileFindings(path string, err error) []finding {
	if refusals := admissionFindings(err); len(refusals) > 0 {
		return refusals
	}
	return []finding{{File: path, Message: strings.TrimPrefix(err.Error(), path+": ")}}
}

// objectSources says which file each object came from, the first file
// when two define it (as manifests.Merge keeps the first), and, for the
// files a status refusal is in, each object's line (each such file read
// once more, and only those).
type objectSources struct {
	file  map[manifests.ObjectKey]string
	lines map[string]map[manifests.ObjectKey]int
}

func newObjectSources() *objectSources {
	return &objectSources{file: map[manifests.ObjectKey]string{}, lines: map[string]map[manifests.ObjectKey]int{}}
}

func (s *objectSources) add(file string, in translator.Inputs) {
	for _, k := range input.ObjectKinds {
		for _, o := range k.Objects(&in) {
			key := manifests.ObjectKey{Kind: string(k.Kind()), Namespace: o.GetNamespace(), Name: o.GetName()}
			if _, ok := s.file[key]; !ok {
				s.file[key] = file
			}
		}
	}
}

// statusFinding is a status refusal as a finding, at the line of its
// object in the file it came from.
func (s *objectSources) statusFinding(r statusRefusal, limits manifests.Limits) finding {
	if r.Kind == "" {
		return finding{Message: r.Fleet}
	}
	f := finding{Kind: r.Kind, Namespace: r.Object.Namespace, Name: r.Object.Name, Field: r.Field, Reason: r.Condition.Reason,
		Message: fmt.Sprintf("%s=False (%s): %s", r.Condition.Type, r.Condition.Reason, r.Condition.Message)}
	key := manifests.ObjectKey{Kind: r.Kind, Namespace: r.Object.Namespace, Name: r.Object.Name}
	f.File = s.file[key]
	if f.File == "" {
		return f
	}
	lines, ok := s.lines[f.File]
	if !ok {
		if data, err := limits.ReadDirFile(manifests.DirFile{Path: f.File}); err == nil {
			lines = manifests.ObjectLines(data)
		}
		s.lines[f.File] = lines
	}
	f.Line = lines[key]
	return f
}

// githubCommand is the finding as a GitHub Actions error annotation
// (::error file=F,line=L,title=T::MESSAGE), escaped as the runner wants.
func (f finding) githubCommand() string {
	props := []string{}
	if f.File != "" {
		props = append(props, "file="+escapeProperty(f.File))
	}
	if f.Line > 0 {
		props = append(props, fmt.Sprintf("line=%d", f.Line))
	}
	if f.Kind != "" {
		props = append(props, "title="+escapeProperty(f.Kind+" "+objectName(types.NamespacedName{Namespace: f.Namespace, Name: f.Name})))
	}
	msg := f.Message
	if f.Field != "" {
		msg = f.Field + ": " + msg
	}
	return "::error " + strings.Join(props, ",") + "::" + escapeData(msg)
}

var (
	dataEscaper     = strings.NewReplacer("%", "%25", "\r", "%0D", "\n", "%0A")
	propertyEscaper = strings.NewReplacer("%", "%25", "\r", "%0D", "\n", "%0A", ":", "%3A", ",", "%2C")
)

func escapeData(s string) string     { return dataEscaper.Replace(s) }
func escapeProperty(s string) string { return propertyEscaper.Replace(s) }
