package monitoring

import (
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/prometheus/common/model"
	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/model/rulefmt"
	"github.com/prometheus/prometheus/promql/parser"

	"github.com/tlsplane/tlsplane/e2e/harness"
)

var (
	rulesFile     = filepath.Join(harness.RepoRoot(), "charts", "tlsplane", "rules", "tlsplane.rules.yaml")
	dashboardFile = filepath.Join(harness.RepoRoot(), "charts", "tlsplane", "dashboards", "tlsplane.json")
)

// promQL is the parser of a Prometheus without feature flags: no
// experimental functions or syntax, which an on-call's Prometheus may not
// enable.
var promQL = parser.NewParser(parser.Options{})

// expression is one PromQL expression the chart ships.
type expression struct {
	where string // "alert X", "panel \"Y\" query A", "variable fleet"
	expr  string // as written in the file
	// promql is expr with Grafana's variables replaced by values of their
	// kind; it equals expr for the rules.
	promql string
}

// ruleExpressions reads the rule file as Prometheus does (rulefmt: unknown
// fields, duplicate rules, bad templates and unparsable expressions are
// errors) and returns its expressions.
func ruleExpressions(t *testing.T) []expression {
	t.Helper()
	groups, errs := rulefmt.ParseFile(rulesFile, false, model.LegacyValidation, promQL, slog.New(slog.NewTextHandler(io.Discard, nil)))
	for _, err := range errs {
		t.Errorf("rulefmt: %v", err)
	}
	if len(errs) > 0 {
		t.FailNow()
	}
	var out []expression
	for _, g := range groups.Groups {
		for _, r := range g.Rules {
			name := "alert " + r.Alert
			if r.Record != "" {
				name = "record " + r.Record
			}
			out = append(out, expression{where: name, expr: r.Expr, promql: r.Expr})
		}
	}
	if len(out) == 0 {
		t.Fatalf("%s: no rules", rulesFile)
	}
	return out
}

// alertNames are the alerts of the rule file.
func alertNames(t *testing.T) []string {
	var names []string
	for _, e := range ruleExpressions(t) {
		if name, ok := strings.CutPrefix(e.where, "alert "); ok {
			names = append(names, name)
		}
	}
	return names
}

// dashboard is the part of Grafana's dashboard model the tests read.
type dashboard struct {
	Templating struct {
		List []struct {
			Name       string          `json:"name"`
			Type       string          `json:"type"`
			Query      json.RawMessage `json:"query"`
			Definition string          `json:"definition"`
		} `json:"list"`
	} `json:"templating"`
	Panels []panel `json:"panels"`
}

type panel struct {
	Title      string `json:"title"`
	Type       string `json:"type"`
	Datasource *struct {
		UID string `json:"uid"`
	} `json:"datasource"`
	Targets []struct {
		RefID      string `json:"refId"`
		Expr       string `json:"expr"`
		Datasource *struct {
			UID string `json:"uid"`
		} `json:"datasource"`
	} `json:"targets"`
	Panels []panel `json:"panels"` // a collapsed row's
}

func readDashboard(t *testing.T) dashboard {
	t.Helper()
	data, err := os.ReadFile(dashboardFile)
	if err != nil {
		t.Fatal(err)
	}
	var d dashboard
	dec := json.NewDecoder(strings.NewReader(string(data)))
	if err := dec.Decode(&d); err != nil {
		t.Fatalf("%s: %v", dashboardFile, err)
	}
	return d
}

// grafanaGlobals are the built-in variables the dashboard may use, with a
// value of their kind.
var grafanaGlobals = map[string]string{
	"__rate_interval": "5m",
	"__interval":      "1m",
	"__range":         "1h",
}

var variableRef = regexp.MustCompile(`\$\{(\w+)(?::\w+)?\}|\$(\w+)|\[\[(\w+)\]\]`)

// substitute replaces Grafana's variables: the built-in intervals by a
// duration, the dashboard's own (multi-value, used in =~ matchers) by .*.
// An unknown variable is an error: Grafana would send it as written.
func substitute(expr string, own []string) (string, error) {
	var unknown []string
	out := variableRef.ReplaceAllStringFunc(expr, func(ref string) string {
		m := variableRef.FindStringSubmatch(ref)
		name := m[1] + m[2] + m[3]
		if v, ok := grafanaGlobals[name]; ok {
			return v
		}
		if slices.Contains(own, name) {
			return ".*"
		}
		unknown = append(unknown, ref)
		return ref
	})
	if len(unknown) > 0 {
		return "", fmt.Errorf("unknown Grafana variables %q", unknown)
	}
	return out, nil
}

// labelValues is Grafana's variable query label_values(selector, label).
var labelValues = regexp.MustCompile(`^label_values\((.+),\s*(\w+)\)$`)

// dashboardExpressions returns every query of the dashboard: the panels'
// targets (rows' too) and the query variables' selectors. It fails on a
// panel or target whose datasource is not the datasource variable.
func dashboardExpressions(t *testing.T) []expression {
	t.Helper()
	d := readDashboard(t)
	var own []string
	for _, v := range d.Templating.List {
		own = append(own, v.Name)
	}
	if !slices.Contains(own, "datasource") || !slices.Contains(own, "fleet") {
		t.Errorf("the dashboard's variables are %q, want datasource and fleet among them", own)
	}
	var out []expression
	add := func(where, expr string) {
		sub, err := substitute(expr, own)
		if err != nil {
			t.Errorf("%s: %q: %v", where, expr, err)
			return
		}
		out = append(out, expression{where: where, expr: expr, promql: sub})
	}
	for _, v := range d.Templating.List {
		if v.Type != "query" {
			continue
		}
		m := labelValues.FindStringSubmatch(v.Definition)
		if m == nil {
			t.Errorf("variable %s: query %q is not label_values(selector, label)", v.Name, v.Definition)
			continue
		}
		if !strings.Contains(string(v.Query), v.Definition) {
			t.Errorf("variable %s: query %s differs from its definition %q", v.Name, v.Query, v.Definition)
		}
		add("variable "+v.Name, m[1])
	}
	var walk func(ps []panel)
	walk = func(ps []panel) {
		for _, p := range ps {
			walk(p.Panels)
			if p.Type == "row" || p.Type == "text" {
				continue
			}
			if p.Datasource == nil || p.Datasource.UID != "${datasource}" {
				t.Errorf("panel %q: datasource %+v, want the variable ${datasource}", p.Title, p.Datasource)
			}
			if len(p.Targets) == 0 {
				t.Errorf("panel %q has no query", p.Title)
			}
			for _, tg := range p.Targets {
				if tg.Datasource != nil && tg.Datasource.UID != "${datasource}" {
					t.Errorf("panel %q query %s: datasource %q, want ${datasource}", p.Title, tg.RefID, tg.Datasource.UID)
				}
				add(fmt.Sprintf("panel %q query %s", p.Title, tg.RefID), tg.Expr)
			}
		}
	}
	walk(d.Panels)
	if len(out) == 0 {
		t.Fatalf("%s: no queries", dashboardFile)
	}
	return out
}

// metricNames are the metric names expr selects. A selector without a
// fixed name (a regular expression on __name__, or none) is an error: it
// could not be checked against what tlsplane exports.
func metricNames(expr parser.Expr) ([]string, error) {
	var names []string
	var err error
	parser.Inspect(expr, func(node parser.Node, _ []parser.Node) error {
		vs, ok := node.(*parser.VectorSelector)
		if !ok {
			return nil
		}
		name := vs.Name
		for _, m := range vs.LabelMatchers {
			if m.Name == labels.MetricName {
				if m.Type != labels.MatchEqual {
					err = fmt.Errorf("selector %s: a metric name that is not fixed cannot be checked", vs)
				}
				name = m.Value
			}
		}
		if name == "" {
			err = fmt.Errorf("selector %s has no metric name", vs)
		}
		names = append(names, name)
		return nil
	})
	slices.Sort(names)
	return slices.Compact(names), err
}

// TestExpressionsParse parses every expression of the rule file and the
// dashboard with Prometheus's parser (the rule file as a whole with
// rulefmt, as Prometheus loads it), and requires every selector to name
// its metric.
func TestExpressionsParse(t *testing.T) {
	all := append(ruleExpressions(t), dashboardExpressions(t)...)
	for _, e := range all {
		t.Run(e.where, func(t *testing.T) {
			parsed, err := promQL.ParseExpr(e.promql)
			if err != nil {
				t.Fatalf("%q: %v", e.promql, err)
			}
			names, err := metricNames(parsed)
			if err != nil {
				t.Fatalf("%q: %v", e.promql, err)
			}
			if len(names) == 0 {
				t.Fatalf("%q selects no metric", e.promql)
			}
		})
	}
}

// usedMetrics maps every metric name the rules and the dashboard select
// to where.
func usedMetrics(t *testing.T) map[string][]string {
	t.Helper()
	used := map[string][]string{}
	for _, e := range append(ruleExpressions(t), dashboardExpressions(t)...) {
		parsed, err := promQL.ParseExpr(e.promql)
		if err != nil {
			t.Fatalf("%s: %q: %v (see TestExpressionsParse)", e.where, e.promql, err)
		}
		names, err := metricNames(parsed)
		if err != nil {
			t.Fatalf("%s: %v", e.where, err)
		}
		for _, n := range names {
			used[n] = append(used[n], e.where)
		}
	}
	return used
}
