package kubechurn

import (
	"bufio"
	"io"
	"os"
	"strings"
	"time"
)

// publishLog follows tlsplane's log for its "snapshot published" lines
// (logged at the end of a publish, once the fleets' snapshots are set and
// their streams told), whose time, to the millisecond, splits an edit's
// latency into the time to tlsplane's publish and Envoy's part after it.
type publishLog struct {
	path   string
	offset int64
}

// mark starts the next search at the log's current end.
func (l *publishLog) mark() error {
	fi, err := os.Stat(l.path)
	if err != nil {
		return err
	}
	l.offset = fi.Size()
	return nil
}

// next is the time of the first publish logged after the mark, ok false
// when none is.
func (l *publishLog) next() (time.Time, bool, error) {
	f, err := os.Open(l.path)
	if err != nil {
		return time.Time{}, false, err
	}
	defer f.Close()
	if _, err := f.Seek(l.offset, io.SeekStart); err != nil {
		return time.Time{}, false, err
	}
	at, ok := firstPublish(f)
	return at, ok, nil
}

// all are the times of every publish logged after the mark.
func (l *publishLog) all() ([]time.Time, error) {
	f, err := os.Open(l.path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if _, err := f.Seek(l.offset, io.SeekStart); err != nil {
		return nil, err
	}
	return publishTimes(f, 0), nil
}

// firstPublish is the time of the first `msg="snapshot published"` line of
// a slog text log (`time=2006-01-02T15:04:05.000Z07:00 level=INFO msg=...`).
func firstPublish(r io.Reader) (time.Time, bool) {
	if t := publishTimes(r, 1); len(t) == 1 {
		return t[0], true
	}
	return time.Time{}, false
}

// publishTimes are the times of the `msg="snapshot published"` lines of a
// slog text log, the first limit of them (0: all).
func publishTimes(r io.Reader, limit int) []time.Time {
	var out []time.Time
	s := bufio.NewScanner(r)
	s.Buffer(make([]byte, 64<<10), 1<<20)
	for s.Scan() {
		line := s.Text()
		if !strings.Contains(line, `msg="snapshot published"`) {
			continue
		}
		stamp, _, _ := strings.Cut(strings.TrimPrefix(line, "time="), " ")
		if t, err := time.Parse(time.RFC3339Nano, stamp); err == nil {
			out = append(out, t)
			if len(out) == limit {
				break
			}
		}
	}
	return out
}
