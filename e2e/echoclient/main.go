package echoclient

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"
)

// Exit codes of the original: its fatal log exits 1, cobra's errors -1.
const (
	exitFailed = 1
	exitUsage  = 255
)

// Main runs the client with args (the command line without the command's
// name), writing what the original writes: each request's lines and its
// log on stdout, a command-line error on stderr. It returns the exit code.
func Main(args []string, stdout, stderr io.Writer) int {
	return run(context.Background(), args, stdout, stderr, time.Now)
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer, now func() time.Time) int {
	r, helped, err := parse(args, stdout)
	var usage usageError
	switch {
	case helped:
		return 0
	case errors.As(err, &usage):
		fmt.Fprintf(stderr, "Error: %v\n", usage.error)
		return exitUsage
	case err != nil:
		logLine(stdout, now(), "fatal", err.Error())
		return exitFailed
	}
	outputs, err := forward(ctx, r)
	if err != nil {
		logLine(stdout, now(), "fatal", "Error "+err.Error())
		return exitFailed
	}
	// One output per request, each a block of lines: with Println's
	// newline, a blank line parts them, which the suite's batch parser
	// splits on.
	for _, out := range outputs {
		fmt.Fprintln(stdout, out)
	}
	logLine(stdout, now(), "info", "All requests succeeded")
	return 0
}

// logLine writes one line as Istio's log does on stdout (zap's console
// encoder: time, level, message, tab-separated).
func logLine(w io.Writer, at time.Time, level, msg string) {
	fmt.Fprintf(w, "%s\t%s\t%s\n", at.UTC().Format("2006-01-02T15:04:05.000000Z"), level, msg)
}
