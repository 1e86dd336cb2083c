package main

import (
	"bufio"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strconv"
	"time"

	"github.com/tlsplane/tlsplane/translator/document"
)

var translateHelp = `Usage: tlsplane translate [flags] PATH...

Reads manifests (files, or directories of *.yaml, *.yml, *.json; in a
directory, documents that are not Kubernetes objects are skipped with a
warning) and prints the Envoy clusters, endpoints and secrets, each Gateway
fleet's listeners, route configurations and certificates (private keys
redacted), and the policies, GatewayClasses, Gateways, ListenerSets and
routes (` + routeKindList("s", ", ", " and ") + `)
with their computed status. Flags may come before or after the paths.
SOURCE_DATE_EPOCH, when set, fixes the clock used for lastTransitionTime.
Exit status: 0 when everything was accepted and served, 3 when the output was
printed but something was refused (each object and why on stderr: a status
with Accepted, ResolvedRefs or Programmed False, or a fleet whose configuration
could not be served), 1 when nothing could be translated, 2 for bad usage.
`

var translateFlagGroups = []flagGroup{
	{"Output", []string{"o", "check"}},
	{"Translation", translationFlagNames},
	dirLimitsGroup,
}

// runTranslate runs the translator offline on manifests and prints the
// document golden files hold. It returns a *refusedError (exit 3) after
// printing when it refused anything: an object the API server would
// refuse (the translation is of the others), an object whose status says
// so, or a fleet the publisher's checks refuse.
func runTranslate(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("translate", flag.ContinueOnError)
	format := fs.String("o", document.FormatYAML, "output format: yaml or json")
	tf := registerTranslationFlags(fs)
	check := fs.Bool("check", false, "print only what is refused, as tlsplane validate does (-o json for tools), instead of the translation")
	paths, err := parseFlags(fs, args)
	if errors.Is(err, flag.ErrHelp) {
		printHelp(stdout, fs, translateHelp, translateFlagGroups)
		return nil
	}
	if err != nil {
		return fmt.Errorf("%w (tlsplane translate --help lists the flags)", err)
	}
	if *format != document.FormatYAML && *format != document.FormatJSON {
		return fmt.Errorf("-o %q: want yaml or json", *format)
	}
	if len(paths) == 0 {
		return errors.New("no PATH given (tlsplane translate --help)")
	}
	if *check {
		return checkPaths(paths, tf, checkFormat(*format), stdout, stderr)
	}
	now, err := translateClock()
	if err != nil {
		return err
	}
	warn := func(msg string) { fmt.Fprintln(stderr, "warning:", msg) }
	in, admission, err := readManifests(paths, tf.readLimits(), warn)
	if err != nil {
		return err
	}
	out, fleetRefusals, err := translateAsServed(in, tf, now, warn)
	if err != nil {
		return err
	}
	// Written as it is made: held whole, the document (390 MB at 100,000
	// Services) was a fifth of the peak memory. Only a resource the JSON
	// encoders refuse could cut it midway (exit 1): protojson refuses
	// invalid UTF-8, which the manifest reader's JSON has replaced.
	w := bufio.NewWriterSize(stdout, 1<<20)
	if err := document.RenderTo(w, in, out, *format); err != nil {
		return err
	}
	if err := w.Flush(); err != nil {
		return err
	}
	lines := make([]string, 0, len(admission))
	for _, r := range admission {
		lines = append(lines, r.String())
	}
	if lines = append(lines, refused(out, fleetRefusals, tf.controllerName())...); len(lines) > 0 {
		return &refusedError{lines: lines}
	}
	return nil
}

// checkFormat is --check's format for translate's -o: JSON stays JSON,
// the YAML document's default becomes validate's lines.
func checkFormat(o string) string {
	if o == document.FormatJSON {
		return checkJSON
	}
	return checkText
}

// translateClock is the real clock, or SOURCE_DATE_EPOCH (the reproducible
// builds convention) so the output can be compared byte for byte.
func translateClock() (time.Time, error) {
	epoch, ok := os.LookupEnv("SOURCE_DATE_EPOCH")
	if !ok {
		return time.Now(), nil
	}
	secs, err := strconv.ParseInt(epoch, 10, 64)
	if err != nil {
		return time.Time{}, fmt.Errorf("SOURCE_DATE_EPOCH %q: not a number of seconds", epoch)
	}
	return time.Unix(secs, 0).UTC(), nil
}
