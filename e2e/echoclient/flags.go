package echoclient

import (
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/spf13/pflag"
)

// The original's defaults (Istio's pkg/test/echo/common).
const (
	defaultTimeout    = 5 * time.Second
	connectionTimeout = 2 * time.Second
	// maxConcurrency bounds the requests of one run in flight at once.
	maxConcurrency = 20
)

// request is one run's command line: what to send, how often, how.
type request struct {
	url        string // with a scheme
	scheme     string // lower case: http, https, grpc
	count, qps int
	timeout    time.Duration
	// headers as given (names not canonicalized, as the original sends
	// them), without Host, which is hostHeader.
	headers    http.Header
	hostHeader string
	method     string
	message    string // the gRPC Echo request's message
	http2      bool
	insecure   bool
	follow     bool
	newConn    bool
	caFile     string
	certFile   string
	keyFile    string
	serverName string
	alpn       []string
}

// usageError is a bad command line: the original (cobra) prints it as
// "Error: ..." on stderr and exits 255.
type usageError struct{ error }

// notImplemented are the original's flags this client refuses rather
// than ignores.
var notImplemented = []string{"uds", "http3", "server-first", "expect", "hbone", "hbone-header",
	"hbone-ca", "hbone-client-cert", "hbone-client-key", "hbone-insecure-skip-verify"}

// parse reads the command line as the original's does (pflag, flags
// before or after the URL). A usageError is the command line's fault; any
// other error is one the original reports as a failure (exit 1).
func parse(args []string, stdout io.Writer) (*request, bool, error) {
	fs := pflag.NewFlagSet("client", pflag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	r := &request{}
	var headers []string
	fs.IntVar(&r.count, "count", 1, "Number of times to make the request")
	fs.IntVar(&r.qps, "qps", 0, "Queries per second")
	fs.DurationVar(&r.timeout, "timeout", defaultTimeout, "Request timeout (for the whole run)")
	// A string slice, as the original's: a comma splits a value in two.
	fs.StringSliceVarP(&headers, "header", "H", nil, "A list of http headers (use Host for authority) - 'name: value', following curl syntax")
	fs.StringVar(&r.caFile, "ca", "", "CA root cert file")
	fs.StringVar(&r.message, "msg", "HelloWorld", "message to send (for gRPC)")
	fs.StringVar(&r.method, "method", "", "method to use (for HTTP)")
	fs.BoolVar(&r.http2, "http2", false, "send http requests as HTTP2 with prior knowledge")
	fs.BoolVarP(&r.insecure, "insecure-skip-verify", "k", false, "do not verify TLS")
	fs.BoolVarP(&r.follow, "follow-redirects", "L", false, "If enabled, will follow 3xx redirects with the Location header")
	fs.BoolVar(&r.newConn, "new-connection-per-request", false, "If enabled, a new connection will be made to the server for each individual request")
	fs.Bool("force-dns-lookup", false, "each request looks its host up (Go's resolver keeps no cache: always so here)")
	fs.StringVar(&r.certFile, "client-cert", "", "client certificate file to use for request")
	fs.StringVar(&r.keyFile, "client-key", "", "client certificate key file to use for request")
	fs.StringSliceVar(&r.alpn, "alpn", nil, "alpn to set")
	fs.StringVar(&r.serverName, "server-name", "", "server name to set")
	for _, name := range notImplemented {
		fs.String(name, "", "not implemented by this client")
		fs.Lookup(name).NoOptDefVal = "true" // takes a value or stands alone, so it is refused by name
	}
	fs.BoolP("help", "h", false, "help for client")
	if err := fs.Parse(args); err != nil {
		return nil, false, usageError{err}
	}
	if help, _ := fs.GetBool("help"); help {
		fmt.Fprintf(stdout, "Istio test Echo client (the e2e node agent's).\n\nUsage:\n  client URL [flags]\n\nFlags:\n%s", fs.FlagUsages())
		return nil, true, nil
	}
	for _, name := range notImplemented {
		if fs.Changed(name) {
			return nil, false, usageError{fmt.Errorf("flag --%s of the echo-advanced client is not implemented by the e2e node agent's", name)}
		}
	}
	if fs.NArg() != 1 {
		return nil, false, usageError{fmt.Errorf("accepts 1 arg(s), received %d", fs.NArg())}
	}
	r.url = defaultScheme(fs.Arg(0))
	if r.count < 1 {
		r.count = 1
	}
	if r.timeout <= 0 {
		r.timeout = defaultTimeout
	}
	if i := strings.IndexByte(r.url, ':'); i > 0 {
		r.scheme = strings.ToLower(r.url[:i])
	} else {
		return nil, false, fmt.Errorf("missing protocol scheme in the request URL: %s", r.url)
	}
	switch r.scheme {
	case "http", "https", "grpc":
	default:
		return nil, false, fmt.Errorf("URL %s: scheme %q is not implemented by the e2e node agent's echo client (http, https, grpc)", r.url, r.scheme)
	}
	if r.method == "" {
		r.method = http.MethodGet
	}
	r.headers = http.Header{}
	for _, h := range headers {
		parts := strings.Split(h, ":")
		if len(parts) != 2 {
			return nil, false, fmt.Errorf("invalid header format: %q (want name:value)", h)
		}
		// Names as written, not canonicalized: what the original sends.
		r.headers[parts[0]] = append(r.headers[parts[0]], strings.Trim(parts[1], " "))
	}
	r.hostHeader = r.headers.Get("Host")
	r.headers.Del("Host")
	return r, false, nil
}

// defaultScheme adds http:// to a URL without a scheme, as curl does.
func defaultScheme(u string) string {
	p, err := url.Parse(u)
	if err != nil || p.Scheme != "" {
		return u
	}
	return "http://" + u
}
