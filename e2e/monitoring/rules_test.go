package monitoring

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/tlsplane/tlsplane/e2e/harness"
)

var ruleTestsFile = filepath.Join(harness.RepoRoot(), "e2e", "monitoring", "testdata", "rules_test.yaml")

// ruleTests is the part of promtool's test file the Go test reads.
type ruleTests struct {
	RuleFiles []string `json:"rule_files"`
	Tests     []struct {
		Name  string `json:"name"`
		Cases []struct {
			EvalTime  string `json:"eval_time"`
			Alertname string `json:"alertname"`
			ExpAlerts []any  `json:"exp_alerts"`
		} `json:"alert_rule_test"`
	} `json:"tests"`
}

func promtool(bin string, args ...string) (string, error) {
	cmd := exec.Command(bin, args...)
	cmd.Dir = filepath.Dir(ruleTestsFile)
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// TestAlertRules runs testdata/rules_test.yaml with promtool, one subtest
// per test of that file, after `promtool check rules` on the rule file.
// The file must test the chart's rule file itself, and every alert in it
// both firing and not firing.
func TestAlertRules(t *testing.T) {
	data, err := os.ReadFile(ruleTestsFile)
	if err != nil {
		t.Fatal(err)
	}
	var tests ruleTests
	if err := yaml.Unmarshal(data, &tests); err != nil {
		t.Fatalf("%s: %v", ruleTestsFile, err)
	}
	if len(tests.RuleFiles) != 1 || filepath.Clean(filepath.Join(filepath.Dir(ruleTestsFile), tests.RuleFiles[0])) != filepath.Clean(rulesFile) {
		t.Fatalf("rule_files = %q, want the chart's %s alone", tests.RuleFiles, rulesFile)
	}
	fires, silent := map[string]bool{}, map[string]bool{}
	for _, tc := range tests.Tests {
		for _, c := range tc.Cases {
			if len(c.ExpAlerts) > 0 {
				fires[c.Alertname] = true
			} else {
				silent[c.Alertname] = true
			}
		}
	}
	alerts := alertNames(t)
	for _, a := range alerts {
		if !fires[a] {
			t.Errorf("%s: no test where it fires", a)
		}
		if !silent[a] {
			t.Errorf("%s: no test where it must not fire", a)
		}
	}
	for a := range fires {
		if !slices.Contains(alerts, a) {
			t.Errorf("the tests expect %s, which the rule file does not have", a)
		}
	}

	if t.Failed() {
		t.FailNow()
	}

	bin := harness.PromtoolBin(t)
	t.Run("promtool check rules", func(t *testing.T) {
		out, err := promtool(bin, "check", "rules", "--lint=all", "--lint-fatal", rulesFile)
		if err != nil {
			t.Fatalf("promtool check rules: %v\n%s", err, out)
		}
		t.Log(strings.TrimSpace(out))
	})
	for _, tc := range tests.Tests {
		t.Run(tc.Name, func(t *testing.T) {
			out, err := promtool(bin, "test", "rules", "--run", "^"+regexp.QuoteMeta(tc.Name)+"$", filepath.Base(ruleTestsFile))
			if err != nil {
				t.Fatalf("promtool test rules: %v\n%s", err, out)
			}
			if !strings.Contains(out, "SUCCESS") {
				t.Fatalf("promtool test rules: no SUCCESS line:\n%s", out)
			}
		})
	}
}
