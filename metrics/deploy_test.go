package metrics_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/goccy/go-yaml"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/crawlkeeper/crawlkeeper/metrics"
)

// exported maps every series name crawlkeeper exports to its label names:
// the collectors of metrics.New, histograms with their _bucket, _sum and
// _count series, and the other names the package's sources spell out
// (with nil labels: unknown).
func exported(t *testing.T) map[string]map[string]bool {
	t.Helper()
	m := metrics.New()
	out := map[string]map[string]bool{}
	name := regexp.MustCompile(`fqName: "([^"]+)"`)
	labels := regexp.MustCompile(`variableLabels: \{([^}]*)\}|variableLabels: \[([^\]]*)\]`)
	for _, c := range metrics.Collectors(m) {
		ch := make(chan *prometheus.Desc, 10)
		c.Describe(ch)
		close(ch)
		for d := range ch {
			s := d.String()
			n := name.FindStringSubmatch(s)
			if n == nil {
				t.Fatalf("cannot read the name of %s", s)
			}
			ls := map[string]bool{}
			if l := labels.FindStringSubmatch(s); l != nil {
				for _, x := range strings.FieldsFunc(l[1]+l[2], func(r rune) bool { return r == ',' || r == ' ' }) {
					ls[x] = true
				}
			}
			out[n[1]] = ls
			if _, hist := c.(prometheus.Histogram); hist || strings.HasPrefix(reflect.TypeOf(c).String(), "*prometheus.HistogramVec") {
				withLe := map[string]bool{"le": true}
				for k := range ls {
					withLe[k] = true
				}
				out[n[1]+"_bucket"] = withLe
				out[n[1]+"_sum"] = ls
				out[n[1]+"_count"] = ls
			}
		}
	}
	// Collectors that are not fields of Metrics (such as the delivery
	// counters read from the store) are named in the package's sources;
	// their labels are not checked.
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	literal := regexp.MustCompile(`"(crawlkeeper_[a-z0-9_]+)"`)
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range literal.FindAllStringSubmatch(string(b), -1) {
			if _, ok := out[m[1]]; !ok {
				out[m[1]] = nil
			}
		}
	}
	if len(out) < 15 {
		t.Fatalf("read only %d metric names: %v", len(out), out)
	}
	return out
}

var (
	seriesName = regexp.MustCompile(`\bcrawlkeeper_[a-z0-9_]+`)
	selector   = regexp.MustCompile(`\b(crawlkeeper_[a-z0-9_]+)\{([^}]*)\}`)
	matcher    = regexp.MustCompile(`([a-zA-Z_][a-zA-Z0-9_]*)\s*(=~|!~|!=|=)`)
)

// targetLabels are added by Prometheus to every scraped series.
var targetLabels = map[string]bool{"instance": true, "job": true}

// checkExpr reports series in expr that crawlkeeper does not export, and
// label matchers on labels those series do not have.
func checkExpr(t *testing.T, where, expr string, names map[string]map[string]bool) int {
	t.Helper()
	found := 0
	for _, n := range seriesName.FindAllString(expr, -1) {
		found++
		if _, ok := names[n]; !ok {
			t.Errorf("%s: %s is not a crawlkeeper metric (expr %q)", where, n, expr)
		}
	}
	for _, sel := range selector.FindAllStringSubmatch(expr, -1) {
		have, ok := names[sel[1]]
		if !ok || have == nil {
			continue
		}
		for _, m := range matcher.FindAllStringSubmatch(sel[2], -1) {
			if !have[m[1]] && !targetLabels[m[1]] {
				t.Errorf("%s: %s has no label %q (expr %q)", where, sel[1], m[1], expr)
			}
		}
	}
	return found
}

// TestPrometheusRulesUseExportedMetrics reads deploy/prometheus/alerts.yml
// and checks that every metric its rules query is one crawlkeeper
// exports, with the labels it has. (promtool check rules, in CI, checks
// the syntax.)
func TestPrometheusRulesUseExportedMetrics(t *testing.T) {
	names := exported(t)
	b, err := os.ReadFile("../deploy/prometheus/alerts.yml")
	if err != nil {
		t.Fatal(err)
	}
	var f struct {
		Groups []struct {
			Name  string `yaml:"name"`
			Rules []struct {
				Alert  string `yaml:"alert"`
				Expr   string `yaml:"expr"`
				Labels struct {
					Severity string `yaml:"severity"`
				} `yaml:"labels"`
				Annotations map[string]string `yaml:"annotations"`
			} `yaml:"rules"`
		} `yaml:"groups"`
	}
	if err := yaml.Unmarshal(b, &f); err != nil {
		t.Fatal(err)
	}
	rules, used := 0, 0
	seen := map[string]bool{}
	for _, g := range f.Groups {
		for _, r := range g.Rules {
			rules++
			if r.Alert == "" || seen[r.Alert] || r.Expr == "" || r.Labels.Severity == "" || r.Annotations["summary"] == "" {
				t.Errorf("rule %q: each rule needs a unique alert name, an expr, a severity and a summary", r.Alert)
			}
			seen[r.Alert] = true
			used += checkExpr(t, "alerts.yml "+r.Alert, r.Expr, names)
		}
	}
	if rules < 8 || used < rules-1 {
		t.Fatalf("%d rules querying %d crawlkeeper series: the file was not read as expected", rules, used)
	}
}

// TestGrafanaDashboardUsesExportedMetrics reads deploy/grafana/crawlkeeper.json
// and checks every query of every panel (and of the template variables)
// against the metrics crawlkeeper exports.
func TestGrafanaDashboardUsesExportedMetrics(t *testing.T) {
	names := exported(t)
	b, err := os.ReadFile("../deploy/grafana/crawlkeeper.json")
	if err != nil {
		t.Fatal(err)
	}
	var dash map[string]any
	if err := json.Unmarshal(b, &dash); err != nil {
		t.Fatal(err)
	}
	if dash["uid"] == "" || dash["title"] == "" {
		t.Fatalf("dashboard without uid or title")
	}
	var exprs []string
	var walk func(path string, v any)
	walk = func(path string, v any) {
		switch x := v.(type) {
		case map[string]any:
			for k, c := range x {
				if s, ok := c.(string); ok && (k == "expr" || k == "definition") {
					exprs = append(exprs, s)
				}
				walk(path+"."+k, c)
			}
		case []any:
			for _, c := range x {
				walk(path, c)
			}
		}
	}
	walk("", dash)
	sort.Strings(exprs)
	panels, _ := dash["panels"].([]any)
	queried := map[string]bool{}
	for _, e := range exprs {
		checkExpr(t, "crawlkeeper.json", e, names)
		for _, n := range seriesName.FindAllString(e, -1) {
			queried[strings.TrimSuffix(strings.TrimSuffix(strings.TrimSuffix(n, "_bucket"), "_count"), "_sum")] = true
		}
	}
	if len(panels) < 10 || len(exprs) < 15 {
		t.Fatalf("%d panels, %d queries: the dashboard was not read as expected", len(panels), len(exprs))
	}
	// Every metric crawlkeeper exports has a panel.
	for n := range names {
		base := strings.TrimSuffix(strings.TrimSuffix(strings.TrimSuffix(n, "_bucket"), "_count"), "_sum")
		if strings.HasPrefix(n, "crawlkeeper_") && !queried[base] {
			t.Errorf("no panel shows %s", n)
		}
	}
}
