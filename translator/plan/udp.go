package plan

// UDPProxy is a UDP listener's one route: each client session (source
// address and port) goes to one of Backends, picked by weight; an invalid
// backend (no cluster) drops its share. None: every datagram is dropped.
type UDPProxy struct {
	Name     string            `json:"name,omitempty"` // <listener>
	Backends []WeightedBackend `json:"backends,omitempty"`
}
