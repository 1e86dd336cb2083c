package translator

// Test CAs for the external tests.
var (
	TestCA  = testCA
	TestCA2 = testCA2
)

// EnvoyBinary is the Envoy the external tests validate configuration with.
var EnvoyBinary = envoyBinary
