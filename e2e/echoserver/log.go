package echoserver

import (
	"fmt"
	"io"
	"log"
	"strings"
	"sync"
	"time"
)

// logger writes lines as Istio's log does on stdout (zap's console
// encoder: time, level, scope, message, tab-separated).
type logger struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *logger) line(level, scope, msg string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	fmt.Fprintf(l.w, "%s\t%s\t%s\t%s\n", time.Now().UTC().Format("2006-01-02T15:04:05.000000Z"), level, scope, strings.TrimRight(msg, "\n"))
}

func (l *logger) infof(scope, format string, args ...any) {
	l.line("info", scope, fmt.Sprintf(format, args...))
}

func (l *logger) errorf(scope, format string, args ...any) {
	l.line("error", scope, fmt.Sprintf(format, args...))
}

// std is a standard logger writing to l (net/http's ErrorLog).
func (l *logger) std(scope string) *log.Logger {
	return log.New(writerFunc(func(p []byte) (int, error) {
		l.line("warn", scope, string(p))
		return len(p), nil
	}), "", 0)
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }
