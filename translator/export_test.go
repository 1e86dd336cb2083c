package translator

// Test CAs for the external tests.
var (
	TestCA  = testCA
	TestCA2 = testCA2
)
