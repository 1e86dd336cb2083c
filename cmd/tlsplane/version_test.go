package main

import (
	"runtime/debug"
	"testing"
)

func TestBuildVersion(t *testing.T) {
	settings := func(kv ...string) []debug.BuildSetting {
		var s []debug.BuildSetting
		for i := 0; i < len(kv); i += 2 {
			s = append(s, debug.BuildSetting{Key: kv[i], Value: kv[i+1]})
		}
		return s
	}
	const rev = "20773a816a932e6b1627f6425737bb3d35469ed3"
	for _, c := range []struct {
		name    string
		stamped string
		info    *debug.BuildInfo
		want    string
	}{
		{"stamped wins", "v1.2.3", &debug.BuildInfo{Main: debug.Module{Version: "v0.0.0-x"}}, "v1.2.3"},
		{"no build info", "", nil, "dev"},
		{"module version from a tag or pseudo-version", "", &debug.BuildInfo{Main: debug.Module{Version: "v0.0.0-20261125023842-20773a816a93+dirty"}}, "v0.0.0-20261125023842-20773a816a93+dirty"},
		{"commit when the module version is (devel)", "", &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}, Settings: settings("vcs.revision", rev)}, "20773a816a93"},
		{"modified checkout", "", &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}, Settings: settings("vcs.revision", rev, "vcs.modified", "true")}, "20773a816a93+dirty"},
		{"no VCS information", "", &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}}, "dev"},
	} {
		if got := buildVersion(c.stamped, c.info); got != c.want {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
	}
}
