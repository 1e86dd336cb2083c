// Package echoclient is the `client` command of the Gateway API
// conformance suite's echo-advanced image (Istio's echo client, 1.21), for
// the e2e node agent to run when the suite's mesh tests exec it in a Pod:
// the same flags, the same requests (HTTP, HTTPS, h2c and gRPC's
// EchoTestService/Echo), the same output, which the suite parses with
// sigs.k8s.io/gateway-api/conformance/utils/echo.ParseResponse, and the
// same exit codes (1 when a request fails, 255 for a bad command line).
//
// It sends real requests from wherever it runs, which in a Pod is the
// Pod's network namespace. Flags of the original it does not implement
// (UDS, HBONE, proxies, TCP, TLS, WebSocket, DNS schemes) are refused by
// name rather than ignored.
package echoclient
