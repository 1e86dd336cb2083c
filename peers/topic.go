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
		metrics: metricOpts{
			peers: prometheus.GaugeOpts{Name: "tlsplane_handshake_peers",
				Help: "Other replicas whose Envoys' handshake windows this replica counts (their ConfigMaps)."},
			writes: prometheus.CounterOpts{Name: "tlsplane_handshake_peer_writes_total",
				Help: "Writes of this replica's handshake windows to its ConfigMap."},
			writeErrors: prometheus.CounterOpts{Name: "tlsplane_handshake_peer_write_errors_total",
				Help: "Failed writes of this replica's handshake windows; retried at the next interval."},
			readErrors: prometheus.CounterOpts{Name: "tlsplane_handshake_peer_read_errors_total",
				Help: "Peers' handshake windows that could not be decoded and were ignored."},
		},
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
		metrics: metricOpts{
			peers: prometheus.GaugeOpts{Name: "tlsplane_backend_certificate_peers",
				Help: "Other replicas whose Envoys' backend certificate inventory this replica counts (their ConfigMaps)."},
			writes: prometheus.CounterOpts{Name: "tlsplane_backend_certificate_peer_writes_total",
				Help: "Writes of this replica's backend certificate inventory to its ConfigMap."},
			writeErrors: prometheus.CounterOpts{Name: "tlsplane_backend_certificate_peer_write_errors_total",
				Help: "Failed writes of this replica's backend certificate inventory; retried at the next interval."},
			readErrors: prometheus.CounterOpts{Name: "tlsplane_backend_certificate_peer_read_errors_total",
				Help: "Peers' backend certificate inventories that could not be decoded and were ignored."},
		},
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
