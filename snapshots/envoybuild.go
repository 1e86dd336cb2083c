package snapshots

import (
	"cmp"
	"fmt"

	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
)

// An EnvoyBuild is what an Envoy node says it runs: its version
// (node.user_agent_build_version.version) and whether its BoringSSL is the
// FIPS module (metadata ssl.version "BoringSSL-FIPS", else "BoringSSL").
// Envoy 1.40 sends, over a real ADS stream:
//
//	user_agent_build_version: {version: {major_number: 1, minor_number: 40},
//	  metadata: {build.type: RELEASE, revision.sha: …, revision.status: Clean, ssl.version: BoringSSL}}
//
// It is comparable: the set of a fleet's builds is a map key set.
type EnvoyBuild struct {
	Major, Minor, Patch uint32
	FIPS                bool
}

// The ssl.version values Envoy's BoringSSL builds report.
const (
	sslBoringSSL     = "BoringSSL"
	sslBoringSSLFIPS = "BoringSSL-FIPS"
)

// BuildOf reads node's build; ok is false when the node names no version
// or a TLS library other than BoringSSL (an xDS client that is not Envoy,
// an OpenSSL or AWS-LC build): its capabilities are unknown, so nothing is
// withheld for it, and Envoy decides.
func BuildOf(node *corev3.Node) (EnvoyBuild, bool) {
	bv := node.GetUserAgentBuildVersion()
	v := bv.GetVersion()
	if v == nil {
		return EnvoyBuild{}, false
	}
	b := EnvoyBuild{Major: v.GetMajorNumber(), Minor: v.GetMinorNumber(), Patch: v.GetPatch()}
	switch bv.GetMetadata().GetFields()["ssl.version"].GetStringValue() {
	case sslBoringSSL:
	case sslBoringSSLFIPS:
		b.FIPS = true
	default:
		return EnvoyBuild{}, false
	}
	return b, true
}

// String is how statuses name the build: "Envoy 1.40.0 BoringSSL-FIPS".
func (b EnvoyBuild) String() string {
	ssl := sslBoringSSL
	if b.FIPS {
		ssl = sslBoringSSLFIPS
	}
	return fmt.Sprintf("Envoy %d.%d.%d %s", b.Major, b.Minor, b.Patch, ssl)
}

// atLeast: b's version is v or later.
func (b EnvoyBuild) atLeast(v EnvoyBuild) bool {
	return compareBuilds(b, v) >= 0
}

// compareBuilds orders builds by version, then non-FIPS first.
func compareBuilds(a, b EnvoyBuild) int {
	fips := func(x EnvoyBuild) int {
		if x.FIPS {
			return 1
		}
		return 0
	}
	return cmp.Or(cmp.Compare(a.Major, b.Major), cmp.Compare(a.Minor, b.Minor), cmp.Compare(a.Patch, b.Patch), cmp.Compare(fips(a), fips(b)))
}
