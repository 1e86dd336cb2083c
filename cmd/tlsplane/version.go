package main

import (
	"runtime/debug"
	"strings"
)

// stampedVersion is set only by builds that stamp one:
// -ldflags "-X main.stampedVersion=...". Otherwise the Go build info says.
var stampedVersion string

// version is what /metrics, the API server's user agent and `tlsplane
// version` call this build.
var version = buildVersion(stampedVersion, readBuildInfo())

func readBuildInfo() *debug.BuildInfo {
	info, _ := debug.ReadBuildInfo()
	return info
}

// buildVersion prefers a stamped version, then the main module's version
// (a tag, or Go's pseudo-version of the commit, "+dirty" when the checkout
// had changes), then the commit alone; "dev" when nothing is known (go run
// without VCS information).
func buildVersion(stamped string, info *debug.BuildInfo) string {
	if stamped != "" {
		return stamped
	}
	if info == nil {
		return "dev"
	}
	if v := info.Main.Version; v != "" && v != "(devel)" {
		return v
	}
	if rev := buildSetting(info, "vcs.revision"); rev != "" {
		if len(rev) > 12 {
			rev = rev[:12]
		}
		if buildSetting(info, "vcs.modified") == "true" {
			rev += "+dirty"
		}
		return rev
	}
	return "dev"
}

// versionLine is what `tlsplane version` prints: the version, then the
// full commit and its time when the build info has them.
func versionLine() string {
	info := readBuildInfo()
	parts := []string{"tlsplane", version}
	if info != nil {
		if rev := buildSetting(info, "vcs.revision"); rev != "" {
			commit := "commit " + rev
			if t := buildSetting(info, "vcs.time"); t != "" {
				commit += " " + t
			}
			if buildSetting(info, "vcs.modified") == "true" {
				commit += " (modified)"
			}
			parts = append(parts, commit)
		}
		parts = append(parts, info.GoVersion)
	}
	return strings.Join(parts, " ")
}

func buildSetting(info *debug.BuildInfo, key string) string {
	for _, s := range info.Settings {
		if s.Key == key {
			return s.Value
		}
	}
	return ""
}
