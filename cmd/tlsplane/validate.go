package main

import (
	"errors"
	"flag"
	"fmt"
	"io"

	"github.com/tlsplane/tlsplane/manifests"
	"github.com/tlsplane/tlsplane/translator"
	"github.com/tlsplane/tlsplane/translator/input"
)

var validateHelp = `Usage: tlsplane validate [-o text|json|github] [flags] PATH...

Checks manifests as a cluster running tlsplane would judge them, for CI
pipelines and GitOps checks: each Gateway API object is admitted with the
pinned Gateway API CRDs (schema, CEL rules, defaults) as the API server
admits it, then everything is translated as serve would, and every refusal
is printed, one line each:

  FILE:LINE: KIND NAMESPACE/NAME: FIELD: MESSAGE

A refusal is an object the API server would refuse, a file that cannot be
read as manifests, or a status with Accepted, ResolvedRefs or Programmed
False. -o json prints {"files": N, "objects": N, "findings": [...]} instead;
-o github prints GitHub Actions annotations (::error file=F,line=L::...).
Exit status: 0 when nothing is refused, 3 when something is, 1 when the
paths cannot be read, 2 for bad usage. tlsplane translate --check is the same.
`

var validateFlagGroups = []flagGroup{
	{"Output", []string{"o"}},
	{"Translation", translationFlagNames},
	dirLimitsGroup,
}

func runValidate(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("validate", flag.ContinueOnError)
	format := fs.String("o", checkText, "output format: text, json, or github (GitHub Actions annotations)")
	tf := registerTranslationFlags(fs)
	paths, err := parseFlags(fs, args)
	if errors.Is(err, flag.ErrHelp) {
		printHelp(stdout, fs, validateHelp, validateFlagGroups)
		return nil
	}
	if err != nil {
		return fmt.Errorf("%w (tlsplane validate --help lists the flags)", err)
	}
	if *format != checkText && *format != checkJSON && *format != checkGitHub {
		return fmt.Errorf("-o %q: want text, json or github", *format)
	}
	if len(paths) == 0 {
		return errors.New("no PATH given (tlsplane validate --help)")
	}
	return checkPaths(paths, tf, *format, stdout, stderr)
}

// checkPaths reads every file of paths, going on past a refused one,
// translates what was admitted, prints the findings, and returns a
// *checkFailed when there is any.
func checkPaths(paths []string, tf *translationFlags, format string, stdout, stderr io.Writer) error {
	now, err := translateClock()
	if err != nil {
		return err
	}
	warn := func(msg string) { fmt.Fprintln(stderr, "warning:", msg) }
	var report checkReport
	var parts []manifests.Part
	sources := newObjectSources()
	limits := tf.readLimits()
	err = eachManifestFile(paths, limits, func(f manifests.DirFile, data []byte) error {
		report.Files++
		in, err := parseManifestFile(f, data, limits, warn)
		if err != nil {
			report.Findings = append(report.Findings, fileFindings(f.Path, err)...)
			if !refusedAlone(err) {
				return nil
			}
			// The file's admitted objects are translated, as a cluster
			// would hold them.
		}
		sources.add(f.Path, in)
		parts = append(parts, manifests.Part{Source: f.Path, Inputs: in})
		return nil
	})
	if err != nil {
		return err
	}
	in := manifests.Merge(parts, warn)
	report.Objects = objectCount(in)
	out, fleetRefusals, err := translateAsServed(in, tf, now, warn)
	if err != nil {
		return err
	}
	for _, r := range statusRefusals(out, fleetRefusals, tf.controllerName()) {
		report.Findings = append(report.Findings, sources.statusFinding(r, limits))
	}
	if err := report.print(stdout, format); err != nil {
		return err
	}
	if n := len(report.Findings); n > 0 {
		return &checkFailed{refused: n}
	}
	return nil
}

// checkFailed is validate's exit 3: the findings are printed already.
type checkFailed struct{ refused int }

func (e *checkFailed) Error() string { return fmt.Sprintf("%d refused", e.refused) }

func (e *checkFailed) exitCode() int { return exitRefused }

func objectCount(in translator.Inputs) int {
	n := 0
	for _, k := range input.ObjectKinds {
		n += len(k.Objects(&in))
	}
	return n
}
