package echoserver

import (
	"fmt"
	"io"
)

// The response body's fields, as the original names them
// (pkg/test/echo/fields.go) and the suite's ParseResponse reads them.
const (
	fieldServiceVersion = "ServiceVersion"
	fieldServicePort    = "ServicePort"
	fieldStatusCode     = "StatusCode"
	fieldURL            = "URL"
	fieldHost           = "Host"
	fieldHostname       = "Hostname"
	fieldMethod         = "Method"
	fieldProto          = "Proto"
	fieldAlpn           = "Alpn"
	fieldRequestHeader  = "RequestHeader"
	fieldCluster        = "Cluster"
	fieldIstioVersion   = "IstioVersion"
	fieldIP             = "IP" // the caller's address
	fieldEcho           = "Echo"
)

// writeField writes one "Field=value" line.
func writeField(w io.Writer, field, value string) {
	fmt.Fprintf(w, "%s=%s\n", field, value)
}

// writeNonEmpty writes the line only when value is set, as the original
// does for the optional fields.
func writeNonEmpty(w io.Writer, field, value string) {
	if value != "" {
		writeField(w, field, value)
	}
}

// writeKeyValue writes "Field=key:value" (the headers).
func writeKeyValue(w io.Writer, field, key, value string) {
	writeField(w, field, key+":"+value)
}
