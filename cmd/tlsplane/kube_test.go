package main

import (
	"flag"
	"io"
	"testing"
)

func TestKubeModeEnabled(t *testing.T) {
	tests := []struct {
		name      string
		args      []string
		inCluster bool
		want      bool
	}{
		{"nothing", nil, false, false},
		{"kubeconfig", []string{"--kubeconfig", "/k"}, false, true},
		{"in a pod", nil, true, true},
		{"in a pod serving a mounted directory", []string{"--dir", "/config"}, true, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.inCluster {
				t.Setenv("KUBERNETES_SERVICE_HOST", "10.0.0.1")
			} else {
				t.Setenv("KUBERNETES_SERVICE_HOST", "")
			}
			fs := flag.NewFlagSet("serve", flag.ContinueOnError)
			fs.SetOutput(io.Discard)
			fs.String("dir", "", "")
			k := registerKubeFlags(fs)
			if err := fs.Parse(tt.args); err != nil {
				t.Fatal(err)
			}
			if got := k.enabled(); got != tt.want {
				t.Errorf("enabled() = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestSplitList(t *testing.T) {
	got := splitList(" shop, ,pay,")
	if len(got) != 2 || got[0] != "shop" || got[1] != "pay" {
		t.Errorf("splitList = %q, want [shop pay]", got)
	}
}
