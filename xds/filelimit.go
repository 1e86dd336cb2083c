package xds

import "fmt"

// DefaultMaxConnections caps the connections derived from a large file
// limit: an established ADS connection costs about 76 KiB of tlsplane's
// RSS (measured: 600 of them, 48 to 93 MiB), so 2048 stay well inside
// the chart's 512Mi.
const DefaultMaxConnections = 2048

// FileReserve is how many of the process's file descriptors the xDS port
// leaves to the rest of tlsplane: the admin server's clients, the
// Kubernetes client, the files of --dir and their watch, the runtime.
func FileReserve(fileLimit uint64) uint64 { return 64 + fileLimit/8 }

// minXDSFiles is the fewest file descriptors the xDS port can work with.
const minXDSFiles = 16

// DerivedLimits completes given (zero fields are derived) for a process
// whose file limit (RLIMIT_NOFILE) is fileLimit: connections stay below
// fileLimit minus FileReserve, a quarter of them may be handshaking, an
// eighth come from one address, and a sixteenth of the handshakes. It
// refuses limits that the file limit cannot hold, naming the flag.
func DerivedLimits(given ConnectionLimits, fileLimit uint64) (ConnectionLimits, error) {
	reserve := FileReserve(fileLimit)
	if fileLimit < reserve+minXDSFiles {
		return ConnectionLimits{}, fmt.Errorf("the file limit (RLIMIT_NOFILE, ulimit -n) is %d: tlsplane keeps %d for itself and needs %d more for xDS connections; raise it", fileLimit, reserve, minXDSFiles)
	}
	room := int(min(fileLimit-reserve, 1<<30))
	l := given
	if l.Connections == 0 {
		l.Connections = min(room, DefaultMaxConnections)
	}
	if l.Handshakes == 0 {
		l.Handshakes = max(1, l.Connections/4)
	}
	if l.PerSource == 0 {
		l.PerSource = max(1, l.Connections/8)
	}
	if l.HandshakesPerSource == 0 {
		l.HandshakesPerSource = max(1, l.Handshakes/16)
	}
	switch {
	case l.Connections > room:
		return l, fmt.Errorf("--xds-max-connections %d: the file limit (RLIMIT_NOFILE, ulimit -n) %d leaves %d for xDS connections once %d are kept for the rest of tlsplane; give at most %d or raise the limit",
			l.Connections, fileLimit, room, reserve, room)
	case l.Handshakes > l.Connections:
		return l, fmt.Errorf("--xds-max-handshakes %d: more than --xds-max-connections %d", l.Handshakes, l.Connections)
	case l.PerSource > l.Connections:
		return l, fmt.Errorf("--xds-max-connections-per-source %d: more than --xds-max-connections %d", l.PerSource, l.Connections)
	case l.HandshakesPerSource > l.Handshakes:
		return l, fmt.Errorf("--xds-max-handshakes-per-source %d: more than --xds-max-handshakes %d", l.HandshakesPerSource, l.Handshakes)
	case l.HandshakesPerSource > l.PerSource:
		return l, fmt.Errorf("--xds-max-handshakes-per-source %d: more than --xds-max-connections-per-source %d", l.HandshakesPerSource, l.PerSource)
	}
	return l, nil
}
