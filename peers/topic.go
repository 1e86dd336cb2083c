package peers

import (
	"cmp"
	"slices"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/tlsplane/tlsplane/backendcerts"
	"github.com/tlsplane/tlsplane/handshakes"
)

// topic is one kind of state the replicas share, each replica in an
// object of its own per topic: its name in object names, the label that
// groups its objects, the key of its data, and how its state is exported
// and handed over.
type topic struct {
	kind, label, key string
	// noun names the state in log lines.
	noun string
	// export is this replica's state, encoded; empty when there is none.
	export func() (data []byte, empty bool, err error)
	// set hands a peer's encoded state over; forget drops it.
	set    func(replica string, data []byte) error
	forget func(replica string)
	// horizon is how long a silent peer's state may still count.
	horizon func() time.Duration
	metrics metricOpts
}

// Tracker is what a replica shares and what it is told by its peers of
// the handshake windows (handshakes.Tracker).
type Tracker interface {
	Export() handshakes.Shared
	SetPeer(replica string, s handshakes.Shared)
	ForgetPeer(replica string)
	Window() time.Duration
}

var _ Tracker = (*handshakes.Tracker)(nil)

// Inventory is what a replica shares and what it is told by its peers of
// the backend certificates its Envoys saw (backendcerts.Inventory).
type Inventory interface {
	Export() backendcerts.Shared
	SetPeer(replica string, s backendcerts.Shared)
	ForgetPeer(replica string)
	Retention() time.Duration
}

var _ Inventory = (*backendcerts.Inventory)(nil)

func handshakeTopic(t Tracker) topic {
	return topic{
		kind: "handshakes", label: "tlsplane.io/handshakes", key: "windows.json.gz", noun: "handshake windows",
		export: func() ([]byte, bool, error) {
			s := t.Export()
			data, err := encode(s)
			return data, len(s.Windows) == 0, err
		},
		set: func(replica string, data []byte) error {
			s, err := decode(data)
			if err == nil {
				t.SetPeer(replica, s)
			}
			return err
		},
		forget:  t.ForgetPeer,
		horizon: t.Window,
		metrics: peerMetrics("tlsplane_handshake_peer", "handshake windows"),
	}
}

func certificateTopic(inv Inventory) topic {
	const key = "certificates.json.gz"
	return topic{
		kind: "certificates", label: "tlsplane.io/backend-certificates", key: key, noun: "backend certificate inventory",
		export: func() ([]byte, bool, error) {
			s := inv.Export()
			data, err := encodeCertificates(s)
			return data, len(s.Entries) == 0, err
		},
		set: func(replica string, data []byte) error {
			var s backendcerts.Shared
			err := decodeJSON(data, key, &s)
			if err == nil {
				inv.SetPeer(replica, s)
			}
			return err
		},
		forget:  inv.ForgetPeer,
		horizon: inv.Retention,
		metrics: peerMetrics("tlsplane_backend_certificate_peer", "backend certificate inventory"),
	}
}

// encodeCertificates gzips s's JSON; when it is too large for an object,
// it keeps the entries that expire first, which the conditions need most,
// as many as fit.
func encodeCertificates(s backendcerts.Shared) ([]byte, error) {
	data, err := gzipJSON(s)
	if err != nil || len(data) <= maxPublishedBytes {
		return data, err
	}
	urgent := s
	urgent.Entries = slices.Clone(s.Entries)
	slices.SortStableFunc(urgent.Entries, func(a, b backendcerts.Entry) int { return cmp.Compare(a.NotAfter.Unix(), b.NotAfter.Unix()) })
	for {
		urgent.Entries = urgent.Entries[:len(urgent.Entries)/2]
		if data, err = gzipJSON(urgent); err != nil || len(data) <= maxPublishedBytes {
			return data, err
		}
	}
}

// peerMetrics names a topic's metrics prefix+"s", prefix+"_writes_total",
// and so on; noun is what the topic shares, for their help.
func peerMetrics(prefix, noun string) metricOpts {
	return metricOpts{
		peers: prometheus.GaugeOpts{Name: prefix + "s",
			Help: "Other replicas whose Envoys' " + noun + " this replica counts (their ConfigMaps)."},
		writes: prometheus.CounterOpts{Name: prefix + "_writes_total",
			Help: "Writes of this replica's " + noun + " to its ConfigMap."},
		writeErrors: prometheus.CounterOpts{Name: prefix + "_write_errors_total",
			Help: "Failed writes of this replica's " + noun + "; retried at the next interval."},
		readErrors: prometheus.CounterOpts{Name: prefix + "_read_errors_total",
			Help: "A peer's " + noun + " that could not be decoded and was ignored."},
	}
}
