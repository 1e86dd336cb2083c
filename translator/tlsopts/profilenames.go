package tlsopts

// The named crypto profiles of option tlsplane.io/profile: each sets
// versions, ciphers, curves and signature algorithms together; explicit
// options override single parts.
const (
	ProfileModern       = "modern"
	ProfileIntermediate = "intermediate"
	ProfilePostQuantum  = "post-quantum"
	ProfileFIPS         = "fips-140-3"
)

// ClusterMetadataNamespace and ClusterMetadataProfile are where a cluster
// carries its policy's profile (filter_metadata["tlsplane.io"].profile),
// so a check that only sees the cluster (the fleet's Envoy build,
// snapshots) knows a FIPS profile was asked for.
const (
	ClusterMetadataNamespace = "tlsplane.io"
	ClusterMetadataProfile   = "profile"
)
