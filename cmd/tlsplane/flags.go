package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
)

// flagGroup is a heading of a subcommand's help and the flags under it.
type flagGroup struct {
	title string
	names []string
}

// parseFlags parses flags wherever they stand among the positional
// arguments, as kubectl does (`translate DIR -o json`); a "--" ends the
// flags. Errors are returned, never printed: the caller prints one line.
// -h and --help return flag.ErrHelp.
func parseFlags(fs *flag.FlagSet, args []string) ([]string, error) {
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	var positional []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		rest := fs.Args()
		if len(rest) == 0 {
			return positional, nil
		}
		// The flag package stops at "--" (consumed) or at the first
		// positional argument (kept).
		if consumed := len(args) - len(rest); consumed > 0 && args[consumed-1] == "--" && !isFlagValue(fs, args, consumed-1) {
			return append(positional, rest...), nil
		}
		positional = append(positional, rest[0])
		args = rest[1:]
	}
}

// isFlagValue reports whether args[i] is the value of the flag before it
// (`-o --`), not the end of the flags.
func isFlagValue(fs *flag.FlagSet, args []string, i int) bool {
	if i == 0 {
		return false
	}
	prev := args[i-1]
	if !strings.HasPrefix(prev, "-") || strings.Contains(prev, "=") {
		return false
	}
	f := fs.Lookup(strings.TrimLeft(prev, "-"))
	if f == nil {
		return false
	}
	b, ok := f.Value.(interface{ IsBoolFlag() bool })
	return !ok || !b.IsBoolFlag()
}

// printHelp writes a subcommand's flags under their group headings, spelt
// --flag as in the README (-o for one letter). Every flag of fs must be in exactly one group
// (helpGroupsComplete checks it in the tests).
func printHelp(w io.Writer, fs *flag.FlagSet, header string, groups []flagGroup) {
	fmt.Fprint(w, header)
	for _, g := range groups {
		fmt.Fprintf(w, "\n%s:\n", g.title)
		for _, name := range g.names {
			f := fs.Lookup(name)
			if f == nil {
				continue
			}
			value, usage := flag.UnquoteUsage(f)
			line := "  --" + f.Name
			if len(f.Name) == 1 {
				line = "  -" + f.Name
			}
			if value != "" {
				line += " " + value
			}
			fmt.Fprintf(w, "%s\n      %s", line, usage)
			if !isZeroDefault(f) {
				fmt.Fprintf(w, " (default %s)", f.DefValue)
			}
			fmt.Fprintln(w)
		}
	}
}

// isZeroDefault reports whether a flag's default is its type's zero value,
// which help does not print.
func isZeroDefault(f *flag.Flag) bool {
	switch f.DefValue {
	case "", "false", "0":
		return true
	}
	return false
}

// helpGroupsComplete returns an error naming any flag of fs that no group
// lists, or that several list.
func helpGroupsComplete(fs *flag.FlagSet, groups []flagGroup) error {
	seen := map[string]int{}
	for _, g := range groups {
		for _, name := range g.names {
			if fs.Lookup(name) == nil {
				return fmt.Errorf("group %q lists %q, which is not a flag", g.title, name)
			}
			seen[name]++
		}
	}
	var errs []error
	fs.VisitAll(func(f *flag.Flag) {
		switch seen[f.Name] {
		case 0:
			errs = append(errs, fmt.Errorf("--%s is in no help group", f.Name))
		case 1:
		default:
			errs = append(errs, fmt.Errorf("--%s is in several help groups", f.Name))
		}
	})
	return errors.Join(errs...)
}
