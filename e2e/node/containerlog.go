package node

import (
	"bytes"
	"io"
	"sync"
	"time"
)

// containerLog is what one container wrote, kept as the kubelet keeps it:
// line by line, each stamped with the time it was written and the stream
// it came from, across the container's restarts. It holds the newest
// maxLogBytes; older lines are dropped first.
type containerLog struct {
	mu      sync.Mutex
	lines   []logLine
	first   int // the sequence number of lines[0]
	bytes   int
	partial [2][]byte     // per stream, a line not yet ended
	changed chan struct{} // closed and replaced when a line is added
}

// logStream is where a line came from; the kubelet's names.
type logStream int

const (
	stdout logStream = iota
	stderr
)

var streamNames = [...]string{stdout: "Stdout", stderr: "Stderr"}

type logLine struct {
	at     time.Time
	stream logStream
	text   []byte // without its newline
}

const (
	// maxLogBytes bounds one container's log in memory (the suite's
	// busiest backend writes well under it in a whole run).
	maxLogBytes = 8 << 20
	// maxLineBytes ends a line that long, as the kubelet splits long lines.
	maxLineBytes = 16 << 10
)

func newContainerLog() *containerLog { return &containerLog{changed: make(chan struct{})} }

// writer is the container's stream s, for its process's stdout or stderr.
func (l *containerLog) writer(s logStream) io.Writer { return streamWriter{l, s} }

type streamWriter struct {
	log    *containerLog
	stream logStream
}

func (w streamWriter) Write(p []byte) (int, error) {
	l := w.log
	l.mu.Lock()
	defer l.mu.Unlock()
	now := time.Now()
	added := false
	buf := append(l.partial[w.stream], p...)
	for {
		end := bytes.IndexByte(buf, '\n')
		if end < 0 && len(buf) < maxLineBytes {
			break
		}
		text := buf
		rest := []byte(nil)
		if end >= 0 {
			text, rest = buf[:end], buf[end+1:]
		}
		l.add(logLine{at: now, stream: w.stream, text: append([]byte(nil), text...)})
		added = true
		buf = rest
	}
	l.partial[w.stream] = append([]byte(nil), buf...)
	if added {
		close(l.changed)
		l.changed = make(chan struct{})
	}
	return len(p), nil
}

// add appends line, dropping the oldest lines beyond maxLogBytes; l.mu held.
func (l *containerLog) add(line logLine) {
	l.lines = append(l.lines, line)
	l.bytes += len(line.text) + 1
	drop := 0
	for l.bytes > maxLogBytes && drop < len(l.lines)-1 {
		l.bytes -= len(l.lines[drop].text) + 1
		drop++
	}
	// Reslicing: the next growth of the array copies only what is kept.
	l.lines = l.lines[drop:]
	l.first += drop
}

// from is every line from sequence number seq on (from the oldest kept
// when those are gone), the sequence number after them, and a channel
// closed once another line is added.
func (l *containerLog) from(seq int) ([]logLine, int, <-chan struct{}) {
	l.mu.Lock()
	defer l.mu.Unlock()
	start := max(seq-l.first, 0)
	if start > len(l.lines) {
		start = len(l.lines)
	}
	return l.lines[start:len(l.lines):len(l.lines)], l.first + len(l.lines), l.changed
}
