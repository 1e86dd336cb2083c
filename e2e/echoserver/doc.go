// Package echoserver is the server of the Gateway API conformance suite's
// echo-advanced image (Istio's echo app, 1.21, the image's entrypoint),
// for the e2e node agent to run as the mesh manifests' echo Pods: the
// same flags and defaults (--port, --grpc, --tcp, --tls, --crt, --key,
// --version, --cluster, ...), the same endpoints (HTTP/1.1 and h2c with
// prior knowledge, HTTPS with h2 on the --tls ports, gRPC's
// proto.EchoTestService/Echo and the gRPC health service, TCP echo) and
// the same response body, "Field=value" lines, which the image's client
// prints as "[N body] ..." and the suite reads with
// sigs.k8s.io/gateway-api/conformance/utils/echo.ParseResponse.
//
// It owns the server side only; the client is package echoclient. Flags
// of the original it does not implement (UDP, HBONE, UDS, xDS gRPC,
// metrics) are refused by name rather than ignored.
package echoserver
