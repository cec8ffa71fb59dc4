// Package config reads crawlkeeper's YAML configuration file
// (github.com/goccy/go-yaml) into a crawlkeeper.Config, strictly: an
// unknown key is an error that names it, so a typo never silently falls
// back to a default.
package config

import (
	"bytes"
	"errors"
	"fmt"
	"os"

	"github.com/crawlkeeper/crawlkeeper"
	"github.com/goccy/go-yaml"
)

// EnvVar names the environment variable that points at the configuration
// file when --config is not given.
const EnvVar = "CRAWLKEEPER_CONFIG"

// Load reads the file at path; an empty path means CRAWLKEEPER_CONFIG,
// and when that is unset too the built-in defaults.
func Load(path string) (*crawlkeeper.Config, error) {
	if path == "" {
		path = os.Getenv(EnvVar)
	}
	if path == "" {
		return &crawlkeeper.Config{}, nil
	}
	b, err := os.ReadFile(path)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, crawlkeeper.Errorf(crawlkeeper.EINVALID, "config file %s does not exist: check --config or %s", path, EnvVar)
		}
		return nil, crawlkeeper.Errorf(crawlkeeper.EINVALID, "read config %s: %v", path, err)
	}
	cfg, err := Parse(b)
	if err != nil {
		return nil, crawlkeeper.Errorf(crawlkeeper.EINVALID, "config %s: %s", path, crawlkeeper.ErrorMessage(err))
	}
	return cfg, nil
}

// Parse reads configuration YAML and validates it.
func Parse(b []byte) (*crawlkeeper.Config, error) {
	cfg := &crawlkeeper.Config{}
	if len(bytes.TrimSpace(b)) > 0 {
		dec := yaml.NewDecoder(bytes.NewReader(b), yaml.Strict())
		if err := dec.Decode(cfg); err != nil {
			return nil, crawlkeeper.Errorf(crawlkeeper.EINVALID, "%s", yaml.FormatError(err, false, true))
		}
	}
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	return cfg, nil
}

// Example is a commented configuration with every default spelled out;
// `crawlkeeper help config` prints it after the reference.
const Example = `# crawlkeeper configuration. Every key is optional.
defaults:
  key: [title, url]          # identity fields; missing ones fall back to a content hash
  volatile: ["*_at", "*timestamp*", "scraped*", "fetched*", "crawled*", "download_*", "retrieved*"]
  event_fields: [deadline, event_date, event_at, end_date, expires, closing_date]
  event_start_fields: [event_date, event_at, start_date]
  timezone: UTC              # zone of dates without one; a date-only deadline ends at midnight here
  # locale: en-US            # language and day/month order hint
  # date_order: DMY          # DMY, MDY or YMD for ambiguous numeric dates
  max_age: 30d               # archive when crawled_at is older ("off" disables)
  stale_after: off           # archive when last_updated_at is older
  event: true                # archive when event_at (+ grace) has passed
  grace: 0
  purge_after: off           # delete archived records this long after archiving (export first)
  history_limit: 100
  key_rules:                 # how key fields are compared (docs/KEYS.md); after a change, run crawlkeeper rekey
    url:
      canonical: true        # scheme/host case, IDNA, ports, tracking parameters, query order, trailing slash...
      drop_params: []        # parameters to drop besides the built-in tracking list: names or prefixes ("pf_rd_*")
      keep_params: []        # built-in tracking parameters that name a page on this site
      keep_trailing_slash: false
      fold_www: false        # true: www.example.com is example.com
      keep_scheme: false     # true: http:// and https:// are different pages
      keep_directory_index: false # true: /news/index.html and /news/ are different pages
    title:
      fold: true             # NFKC and case folding: "ＤＡＴＡ Engineer" is "data engineer"
      keep_entities: false   # true: "Q&amp;A" and "Q&A" are different titles
  search: true               # index title and text fields for full-text search
  # search_fields: [body]    # fields indexed besides the title (default: the 3 longest string fields)
  # search_language: simple  # PostgreSQL text search configuration (english, german, ...: stemming)
sources:
  example-jobs:
    timezone: Asia/Tokyo
    stale_after: 3d
    key_rules:
      url: {drop_params: [ref, sid]}
limits:
  max_item_bytes: 1048576
  batch: 1000
store:
  durability: full           # acknowledged writes survive a power loss; normal: a killed process only
pipeline:
  period: 24h                # every active record is reprocessed at least this often
  readers: 2                 # parallel range readers of a rescan pass
  # workers: 4               # processing goroutines (default: the CPUs)
  batch: 500                 # records per read and write
  max_rate: 0                # records read per second by passes; 0 = no cap
  processors: [dates, fingerprint, stats]   # also extract, exec, noop
  max_failures: 3            # failures of one processor before a record goes to the dead letters
  # exec: {command: [python3, enrich.py], timeout: 10s, version: 1}
  fingerprint:               # near-duplicates: MinHash of word pairs (docs/KEYS.md)
    threshold: 0.5           # estimated Jaccard similarity at which two texts are grouped
    min_words: 5             # shorter texts are not fingerprinted
alerts:                      # evaluated by serve; each alert fires once and resolves once
  every: 1m
  # webhooks:
  #   - url: https://hooks.slack.com/services/T000/B000/XXXX
  #     format: slack          # {"text": ...}; json (default) posts the whole event
  rules: []
  # rules:
  #   - {kind: round_stalled, buckets: 3}              # newest round: no target done in 3 buckets
  #   - {kind: ingest_stopped, source: example-jobs, for: 1h}
  #   - {kind: date_errors, threshold: 0.05}           # share of active records per source
  #   - {kind: freshness}                              # oldest processed_at older than pipeline.period
  #   - {kind: fill_rate, field: salary, threshold: 0.2}   # 20% lower than the previous round
  #   - {kind: dead_letters, threshold: 0}
`

// String renders cfg back to YAML, for `crawlkeeper config show`.
func String(cfg *crawlkeeper.Config) (string, error) {
	b, err := yaml.Marshal(cfg)
	if err != nil {
		return "", fmt.Errorf("render config: %w", err)
	}
	return string(b), nil
}
