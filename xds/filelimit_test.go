package xds

import (
	"strings"
	"testing"
)

// Whatever the file limit, the derived connections stay below it with the
// reserve left over, and every budget holds at least one connection.
func TestDerivedLimitsStayBelowTheFileLimit(t *testing.T) {
	for _, fileLimit := range []uint64{100, 256, 1024, 4096, 65536, 1 << 20, 1 << 40} {
		l, err := DerivedLimits(ConnectionLimits{}, fileLimit)
		if err != nil {
			t.Fatalf("file limit %d: %v", fileLimit, err)
		}
		if uint64(l.Connections)+FileReserve(fileLimit) > fileLimit {
			t.Errorf("file limit %d: %d connections + %d reserved exceed it", fileLimit, l.Connections, FileReserve(fileLimit))
		}
		if l.Connections > DefaultMaxConnections || l.Handshakes < 1 || l.PerSource < 1 || l.HandshakesPerSource < 1 ||
			l.Handshakes > l.Connections || l.HandshakesPerSource > l.Handshakes || l.HandshakesPerSource > l.PerSource {
			t.Errorf("file limit %d: incoherent limits %+v", fileLimit, l)
		}
	}
	got, _ := DerivedLimits(ConnectionLimits{}, 1024)
	if want := (ConnectionLimits{Connections: 832, PerSource: 104, Handshakes: 208, HandshakesPerSource: 13}); got != want {
		t.Errorf("file limit 1024: %+v, want %+v", got, want)
	}
}

func TestDerivedLimitsRefuseWhatTheFileLimitCannotHold(t *testing.T) {
	for _, c := range []struct {
		given     ConnectionLimits
		fileLimit uint64
		want      string
	}{
		{ConnectionLimits{}, 64, "the file limit (RLIMIT_NOFILE, ulimit -n) is 64"},
		{ConnectionLimits{Connections: 1000}, 1024, "--xds-max-connections 1000: the file limit (RLIMIT_NOFILE, ulimit -n) 1024 leaves 832"},
		{ConnectionLimits{Connections: 10, Handshakes: 11}, 1024, "--xds-max-handshakes 11: more than --xds-max-connections 10"},
		{ConnectionLimits{Connections: 10, PerSource: 11}, 1024, "--xds-max-connections-per-source 11"},
		{ConnectionLimits{Handshakes: 8, HandshakesPerSource: 9}, 1024, "--xds-max-handshakes-per-source 9: more than --xds-max-handshakes 8"},
	} {
		_, err := DerivedLimits(c.given, c.fileLimit)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v at %d: error %v, want one containing %q", c.given, c.fileLimit, err, c.want)
		}
	}
	// Given values are kept, the rest derived from them.
	got, err := DerivedLimits(ConnectionLimits{Connections: 400}, 1024)
	if want := (ConnectionLimits{Connections: 400, PerSource: 50, Handshakes: 100, HandshakesPerSource: 6}); err != nil || got != want {
		t.Errorf("--xds-max-connections 400: %+v, %v; want %+v", got, err, want)
	}
}
