package handshakes

// The counters read, by their name after "cluster.<name>.", as the xDS
// server's metrics service hands them on.
const (
	counterVerifyError   = "ssl.fail_verify_error"
	counterVerifySAN     = "ssl.fail_verify_san"
	counterVerifyHash    = "ssl.fail_verify_cert_hash"
	counterConnError     = "ssl.connection_error"
	counterHandshake     = "ssl.handshake"
	counterConnectFailed = "upstream_cx_connect_fail"
)

// ConditionHandshakesSucceeding is the condition set on a policy's ancestor
// entries once an Envoy reports on a cluster the policy governs.
const ConditionHandshakesSucceeding = "tlsplane.io/HandshakesSucceeding"

// Reasons of ConditionHandshakesSucceeding.
const (
	ReasonHandshakesSucceeding    = "HandshakesSucceeding"
	ReasonCertificateVerifyFailed = "CertificateVerifyFailed"
	ReasonSubjectAltNameMismatch  = "SubjectAltNameMismatch"
	ReasonCertificateHashMismatch = "CertificateHashMismatch"
	ReasonHandshakeFailed         = "HandshakeFailed"
)

// failure is a counter that counts failed handshakes, with the reason it
// gives and what it means to the policy's author.
type failure struct {
	counter, reason, meaning string
}

// failures, most specific first: a verification failure also counts as a
// connection error, so the first counter that moved names the cause.
var failures = []failure{
	{counterVerifyHash, ReasonCertificateHashMismatch, "the certificate matched no pinned hash"},
	{counterVerifySAN, ReasonSubjectAltNameMismatch, "the certificate matched no subject alternative name the policy (or XBackend) allows"},
	{counterVerifyError, ReasonCertificateVerifyFailed, "the certificate did not verify against the trusted CA certificates"},
	{counterConnError, ReasonHandshakeFailed, "the TLS handshake failed"},
}

// counters is every counter kept, failures first; a counter's index is
// its slot in a counts array.
var counters = [...]string{counterVerifyHash, counterVerifySAN, counterVerifyError, counterConnError, counterHandshake, counterConnectFailed}

// counts holds one value per entry of counters.
type counts [len(counters)]uint64

const (
	slotConnError     = 3
	slotHandshake     = 4
	slotConnectFailed = 5
)

// index is the slot of counter, -1 when not kept.
func index(counter string) int {
	for i, c := range counters {
		if c == counter {
			return i
		}
	}
	return -1
}

// failed is the first failure whose counter rose in c, ok=false if none.
func (c counts) failed() (f failure, n uint64, ok bool) {
	for i, f := range failures {
		if c[i] > 0 {
			return f, c[i], true
		}
	}
	return failure{}, 0, false
}

// attribute turns one report's raw increases into failures by cause:
// Envoy also counts a verification failure as a connection error, so the
// connection-error slot keeps only those no verification counter explains.
// It must see one report's increases, never a sum over reports.
func attribute(raw counts) counts {
	out := raw
	var verified uint64
	for i, f := range failures {
		if f.counter != counterConnError {
			verified += raw[i]
		}
	}
	out[slotConnError] = 0
	if raw[slotConnError] > verified {
		out[slotConnError] = raw[slotConnError] - verified
	}
	return out
}

func (c *counts) add(o counts) {
	for i := range c {
		c[i] += o[i]
	}
}
