// Package echowire is the wire format of the echo-advanced image's gRPC
// service, Istio's proto.EchoTestService, shared by e2e/echoclient and
// e2e/echoserver so the two ends cannot drift: Echo's request and
// response are each one string in field 1 (the request's message, the
// response's body), so neither end needs generated code.
package echowire

import "google.golang.org/protobuf/encoding/protowire"

const (
	// Service and Method name Echo as a server registers it; FullMethod
	// is the path a client invokes.
	Service    = "proto.EchoTestService"
	Method     = "Echo"
	FullMethod = "/" + Service + "/" + Method
)

// Message is a one-string message: s as field 1.
func Message(s string) []byte {
	return protowire.AppendString(protowire.AppendTag(nil, 1, protowire.BytesType), s)
}

// String is field 1 of a message, as a string ("" when absent, the last
// one when repeated, as protobuf decodes).
func String(b []byte) (string, error) {
	var s string
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return "", protowire.ParseError(n)
		}
		b = b[n:]
		if num == 1 && typ == protowire.BytesType {
			v, m := protowire.ConsumeString(b)
			if m < 0 {
				return "", protowire.ParseError(m)
			}
			s, b = v, b[m:]
			continue
		}
		m := protowire.ConsumeFieldValue(num, typ, b)
		if m < 0 {
			return "", protowire.ParseError(m)
		}
		b = b[m:]
	}
	return s, nil
}
