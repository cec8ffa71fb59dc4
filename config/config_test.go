package config_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/crawlkeeper/crawlkeeper"
	"github.com/crawlkeeper/crawlkeeper/config"
)

func TestParseOverrides(t *testing.T) {
	cfg, err := config.Parse([]byte(`
defaults:
  max_age: 10d
  stale_after: 36h
sources:
  tokyo:
    timezone: Asia/Tokyo
    max_age: off
    event: false
    key: [url]
`))
	if err != nil {
		t.Fatal(err)
	}
	def, err := cfg.Policy("other")
	if err != nil {
		t.Fatal(err)
	}
	if def.MaxAge != 10*24*time.Hour || def.StaleAfter != 36*time.Hour || !def.Event || def.Location != time.UTC {
		t.Fatalf("defaults policy = %+v", def)
	}
	tk, err := cfg.Policy("tokyo")
	if err != nil {
		t.Fatal(err)
	}
	if tk.MaxAge != 0 || tk.StaleAfter != 36*time.Hour || tk.Event || tk.Location.String() != "Asia/Tokyo" || strings.Join(tk.Key, ",") != "url" {
		t.Fatalf("override policy = %+v", tk)
	}
}

func TestParseErrors(t *testing.T) {
	for name, tc := range map[string]struct{ yaml, want string }{
		"UnknownKey":      {"defaults:\n  max_agee: 3d\n", "max_agee"},
		"BadDuration":     {"defaults:\n  max_age: soon\n", "soon"},
		"BadZone":         {"sources:\n  a:\n    timezone: Mars/Base\n", "Mars/Base"},
		"BadOrder":        {"defaults:\n  date_order: XYZ\n", "XYZ"},
		"BadScope":        {"serve:\n  tokens:\n    - token: abc\n      scopes: [root]\n", "root"},
		"KeyRulesKey":     {"defaults:\n  key_rules:\n    url:\n      drop_param: [ref]\n", "drop_param"},
		"KeyRulesPattern": {"sources:\n  s:\n    key_rules:\n      url: {drop_params: [\"a*b\"]}\n", `sources["s"]: key_rules.url: drop_params: parameter "a*b"`},
		"KeyRulesBoth":    {"defaults:\n  key_rules:\n    url: {drop_params: [ref], keep_params: [ref]}\n", "both drop_params and keep_params"},
		"KeyRulesFold":    {"defaults:\n  key_rules:\n    title: {fold: maybe}\n", "maybe"},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := config.Parse([]byte(tc.yaml))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error = %v, want one naming %q", err, tc.want)
			}
			if crawlkeeper.ErrorCode(err) != crawlkeeper.EINVALID {
				t.Fatalf("code = %s", crawlkeeper.ErrorCode(err))
			}
		})
	}
}

func TestExampleParses(t *testing.T) {
	cfg, err := config.Parse([]byte(config.Example))
	if err != nil {
		t.Fatal(err)
	}
	p, _ := cfg.Policy("example-jobs")
	if p.StaleAfter != 72*time.Hour {
		t.Fatalf("example stale_after = %v", p.StaleAfter)
	}
}

func TestParseKeyRules(t *testing.T) {
	cfg, err := config.Parse([]byte(`
defaults:
  key_rules:
    url: {drop_params: [ref]}
sources:
  shop:
    key_rules:
      url:
        drop_params: [sid, "pf_rd_*"]
        keep_trailing_slash: true
        fold_www: true
      title: {fold: false}
  raw:
    key_rules:
      url: {canonical: false}
`))
	if err != nil {
		t.Fatal(err)
	}
	shop, _ := cfg.Policy("shop")
	o := shop.URLRules.Options()
	if strings.Join(o.DropParams, ",") != "sid,pf_rd_*" || !o.KeepTrailingSlash || !o.FoldWWW || o.Off || shop.FoldTitle {
		t.Fatalf("shop key rules: %+v fold=%v", o, shop.FoldTitle)
	}
	if got := shop.URLRules.Canonical("https://www.x.example/a/?sid=1&pf_rd_p=2&ref=3"); got != "https://x.example/a/?ref=3" {
		t.Fatalf("shop canonical: %s", got)
	}
	other, _ := cfg.Policy("other")
	if o := other.URLRules.Options(); strings.Join(o.DropParams, ",") != "ref" || o.KeepTrailingSlash || !other.FoldTitle {
		t.Fatalf("defaults key rules: %+v", o)
	}
	raw, _ := cfg.Policy("raw")
	if !raw.URLRules.Options().Off {
		t.Fatal("canonical: false not applied")
	}
	a, _ := crawlkeeper.KeyRulesFingerprint(cfg, "shop")
	b, _ := crawlkeeper.KeyRulesFingerprint(cfg, "other")
	if a == b {
		t.Fatal("different key rules, one fingerprint")
	}
}

func TestLoadFromEnv(t *testing.T) {
	path := filepath.Join(t.TempDir(), "c.yaml")
	os.WriteFile(path, []byte("limits:\n  batch: 7\n"), 0o644)
	t.Setenv(config.EnvVar, path)
	cfg, err := config.Load("")
	if err != nil || cfg.Limits.Batch != 7 {
		t.Fatalf("load from env: %+v %v", cfg, err)
	}
	if _, err := config.Load(filepath.Join(t.TempDir(), "missing.yaml")); err == nil || !strings.Contains(err.Error(), "does not exist") {
		t.Fatalf("missing file: %v", err)
	}
}

func TestParseAlerts(t *testing.T) {
	cfg, err := config.Parse([]byte(`
alerts:
  every: 30s
  webhooks:
    - url: https://hooks.slack.com/services/T0/B0/secret
      format: slack
    - url: http://127.0.0.1:9000/alerts
  rules:
    - {kind: round_stalled, buckets: 6}
    - {name: jobs-quiet, kind: ingest_stopped, source: jobs, for: 2h}
    - {kind: date_errors, threshold: 0.1}
    - {kind: freshness}
    - {kind: fill_rate, source: jobs, field: salary, threshold: 0.25}
    - {kind: dead_letters, threshold: 10}
`))
	if err != nil {
		t.Fatal(err)
	}
	a := cfg.Alerts
	if a.EveryOrDefault() != 30*time.Second || len(a.Webhooks) != 2 || len(a.Rules) != 6 {
		t.Fatalf("alerts = %+v", a)
	}
	var names []string
	for _, r := range a.Rules {
		names = append(names, r.RuleName())
	}
	if got := strings.Join(names, " "); got != "round_stalled jobs-quiet date_errors freshness fill_rate:jobs:salary dead_letters" {
		t.Fatalf("names %s", got)
	}
	if a.Rules[1].For.D() != 2*time.Hour {
		t.Fatalf("for = %v", a.Rules[1].For)
	}
}

func TestParseAlertErrors(t *testing.T) {
	for name, tc := range map[string]struct{ yaml, want string }{
		"UnknownKind":    {"alerts:\n  rules:\n    - kind: disk_full\n", `kind "disk_full": use one of round_stalled`},
		"UnknownKey":     {"alerts:\n  rules:\n    - kind: freshness\n      period: 2h\n", "period"},
		"FillNeedsField": {"alerts:\n  rules:\n    - kind: fill_rate\n", "field: NAME"},
		"ShareOverOne":   {"alerts:\n  rules:\n    - kind: date_errors\n      threshold: 5\n", "from 0 to 1"},
		"SameName":       {"alerts:\n  rules:\n    - kind: freshness\n    - kind: freshness\n", `named "freshness"`},
		"BadWebhook":     {"alerts:\n  webhooks:\n    - url: hooks.example/x\n", "http or https URL"},
		"BadFormat":      {"alerts:\n  webhooks:\n    - url: https://hooks.example/x\n      format: teams\n", `format "teams"`},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := config.Parse([]byte(tc.yaml))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error = %v, want one containing %q", err, tc.want)
			}
		})
	}
}
