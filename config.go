package crawlkeeper

import (
	"fmt"
	"path"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/crawlkeeper/crawlkeeper/canon"
)

// Defaults. Config fields document which default they fall back to.
const (
	DefaultMaxItemBytes = 1 << 20 // 1 MiB per item
	DefaultBatchSize    = 1000
	DefaultHistoryLimit = 100
	DefaultMaxAge       = Duration(30 * 24 * time.Hour)
	DefaultSamples      = 20
)

// DefaultKeyFields are the fields an item's identity is built from.
var DefaultKeyFields = []string{"title", "url"}

// DefaultVolatileFields are excluded from the fallback key and from the
// content hash: they change on every crawl without the content changing.
// Patterns use path.Match syntax and match top-level field names.
var DefaultVolatileFields = []string{"*_at", "*timestamp*", "scraped*", "fetched*", "crawled*", "download_*", "retrieved*"}

// DefaultEventFields are the fields event_at is read from.
var DefaultEventFields = []string{"deadline", "event_date", "event_at", "end_date", "expires", "closing_date"}

// DefaultEventStartFields are event fields that describe when something
// happens rather than when it closes: for a range ("May 15–17") they take
// the start; every other event field takes the end.
var DefaultEventStartFields = []string{"event_date", "event_at", "start_date"}

// Config is crawlkeeper's configuration, usually read from a YAML file.
// The zero value is valid and means "all defaults".
type Config struct {
	// Defaults apply to every source unless the source overrides them.
	Defaults SourceConfig `yaml:"defaults" json:"defaults"`
	// Sources holds per-source overrides, by source name. A field that is
	// not set falls back to Defaults, then to the built-in default.
	Sources map[string]SourceConfig `yaml:"sources" json:"sources"`
	// Limits bound what one item, request and batch may be.
	Limits LimitsConfig `yaml:"limits" json:"limits"`
	// Archive configures the archiver's schedule and batches.
	Archive ArchiveConfig `yaml:"archive" json:"archive"`
	// Monitor configures crawl-round buckets and rare-field samples.
	Monitor MonitorConfig `yaml:"monitor" json:"monitor"`
	// Pipeline configures real-time processing and rescans.
	Pipeline PipelineConfig `yaml:"pipeline" json:"pipeline"`
	// Serve configures the HTTP server.
	Serve ServeConfig `yaml:"serve" json:"serve"`
	// Alerts are evaluated by serve and delivered to webhooks.
	Alerts AlertsConfig `yaml:"alerts" json:"alerts"`
	// Store configures the record store.
	Store StoreConfig `yaml:"store" json:"store"`

	mu       sync.Mutex
	resolved map[string]*SourcePolicy
}

// SourceConfig is the per-source part of the configuration. Nil or empty
// fields are "not set" and fall back as Config.Sources describes.
type SourceConfig struct {
	// Key lists the fields an item's identity is built from.
	// Defaults to [title, url].
	Key []string `yaml:"key" json:"key,omitempty"`
	// Volatile lists field-name patterns excluded from the fallback key and
	// the content hash. Defaults to DefaultVolatileFields.
	Volatile []string `yaml:"volatile" json:"volatile,omitempty"`
	// EventFields lists the fields event_at is read from.
	// Defaults to DefaultEventFields.
	EventFields []string `yaml:"event_fields" json:"event_fields,omitempty"`
	// EventStartFields lists event fields whose ranges take the start.
	// Defaults to DefaultEventStartFields.
	EventStartFields []string `yaml:"event_start_fields" json:"event_start_fields,omitempty"`
	// TimeZone is an IANA zone name used for dates without a zone and for
	// the end of a date-only deadline. Defaults to UTC.
	TimeZone string `yaml:"timezone" json:"timezone,omitempty"`
	// Locale, such as "en-US" or "de-DE", hints the language of dates and
	// the order of ambiguous numeric dates. Defaults to none.
	Locale string `yaml:"locale" json:"locale,omitempty"`
	// Languages are extra language hints for dates ("de", "ja").
	Languages []string `yaml:"languages" json:"languages,omitempty"`
	// DateOrder is DMY, MDY or YMD for ambiguous numeric dates. Defaults
	// to the locale's order: MDY for en-US, DMY elsewhere.
	DateOrder string `yaml:"date_order" json:"date_order,omitempty"`
	// MaxAge archives records whose crawled_at is older. Defaults to 30d;
	// "off" disables the rule.
	MaxAge *Duration `yaml:"max_age" json:"max_age,omitempty"`
	// StaleAfter archives records whose last_updated_at is older.
	// Defaults to off.
	StaleAfter *Duration `yaml:"stale_after" json:"stale_after,omitempty"`
	// Event enables archiving by event_at. Defaults to true.
	Event *bool `yaml:"event" json:"event,omitempty"`
	// Grace is added to event_at before the event rule applies.
	// Defaults to 0.
	Grace *Duration `yaml:"grace" json:"grace,omitempty"`
	// PurgeAfter deletes archived records this long after they were
	// archived (with an export first). Defaults to off.
	PurgeAfter *Duration `yaml:"purge_after" json:"purge_after,omitempty"`
	// HistoryLimit bounds the kept versions per record. Defaults to 100.
	HistoryLimit int `yaml:"history_limit" json:"history_limit,omitempty"`
	// WatchFields are rare fields the monitor samples for this source.
	WatchFields []string `yaml:"watch_fields" json:"watch_fields,omitempty"`
	// HTMLField names the field holding stored HTML for the extract
	// processor. Defaults to "html".
	HTMLField string `yaml:"html_field" json:"html_field,omitempty"`
	// Extract maps derived field names to CSS selectors applied to
	// HTMLField by the extract processor.
	Extract map[string]string `yaml:"extract" json:"extract,omitempty"`
	// KeyRules say how key fields are compared (docs/KEYS.md). Each field
	// that is not set falls back to the defaults section, then to the
	// built-in rule.
	KeyRules KeyRulesConfig `yaml:"key_rules" json:"key_rules"`
	// Search turns full-text indexing of the source's records on or off.
	// Records ingested while it is off are not found by search. Defaults
	// to true.
	Search *bool `yaml:"search" json:"search,omitempty"`
	// SearchFields lists the top-level fields whose text is indexed for
	// search besides the title (strings, numbers and arrays of them).
	// Defaults to the item's 3 longest string fields that are not the
	// title, the url, the HTML field, an event or volatile field, or a
	// value starting with http:// or https://.
	SearchFields []string `yaml:"search_fields" json:"search_fields,omitempty"`
	// SearchLanguage is the PostgreSQL text search configuration of the
	// source's records ("english", "german", ...: stemming and stop
	// words). Other stores ignore it, so with it set PostgreSQL finds
	// more word forms than they do. Defaults to "simple" (no stemming, the
	// behaviour of every store).
	SearchLanguage string `yaml:"search_language" json:"search_language,omitempty"`
}

// KeyRulesConfig configures how the key is built from the key fields.
// Changing it changes keys: existing records keep their old keys until
// `crawlkeeper rekey` rebuilds them (KeyRulesFingerprint tells).
type KeyRulesConfig struct {
	// URL configures URL key fields (url, link, *_url, and any value that
	// starts with http:// or https://).
	URL URLKeyRules `yaml:"url" json:"url"`
	// Title configures the title key field.
	Title TitleKeyRules `yaml:"title" json:"title"`
}

// URLKeyRules configures URL canonicalisation for keys (package canon).
type URLKeyRules struct {
	// Canonical builds keys from the canonical form of URLs. Off, only
	// byte-identical URLs (white space trimmed) are the same page, and the
	// other URL settings have no effect. Defaults to true.
	Canonical *bool `yaml:"canonical" json:"canonical,omitempty"`
	// DropParams are query parameters dropped besides the built-in
	// tracking list (canon.DefaultDropParams): names, or prefixes written
	// "name_*"; "*" drops every parameter. Defaults to none.
	DropParams []string `yaml:"drop_params" json:"drop_params,omitempty"`
	// KeepParams exempts parameters from the built-in tracking list, in the
	// same syntax. Defaults to none.
	KeepParams []string `yaml:"keep_params" json:"keep_params,omitempty"`
	// KeepTrailingSlash keeps "/a/" and "/a" apart. Defaults to false.
	KeepTrailingSlash *bool `yaml:"keep_trailing_slash" json:"keep_trailing_slash,omitempty"`
	// FoldWWW treats "www.example.com" and "example.com" as one host.
	// Defaults to false: a different host is a different page.
	FoldWWW *bool `yaml:"fold_www" json:"fold_www,omitempty"`
	// KeepScheme keeps "http://" and "https://" apart. Defaults to false:
	// one page served both ways is one page.
	KeepScheme *bool `yaml:"keep_scheme" json:"keep_scheme,omitempty"`
	// KeepDirectoryIndex keeps "/news/index.html" and "/news/" apart (the
	// names are canon.IndexNames). Defaults to false: a directory and its
	// index file are one page.
	KeepDirectoryIndex *bool `yaml:"keep_directory_index" json:"keep_directory_index,omitempty"`
}

// TitleKeyRules configures title normalisation for keys.
type TitleKeyRules struct {
	// Fold compares titles in Unicode NFKC with full case folding and
	// invisible characters removed; off, titles differ in letter case and
	// width. White space is collapsed either way. Defaults to true.
	Fold *bool `yaml:"fold" json:"fold,omitempty"`
	// KeepEntities keeps HTML character references ("Q&amp;A",
	// "&#8217;") as text. Defaults to false: they are decoded, so "Q&amp;A"
	// is "Q&A".
	KeepEntities *bool `yaml:"keep_entities" json:"keep_entities,omitempty"`
}

// LimitsConfig bounds input sizes.
type LimitsConfig struct {
	// MaxItemBytes is the largest accepted item. Defaults to 1 MiB.
	MaxItemBytes int `yaml:"max_item_bytes" json:"max_item_bytes,omitempty"`
	// MaxBodyBytes is the largest accepted HTTP request body. Defaults to
	// 64 MiB.
	MaxBodyBytes int64 `yaml:"max_body_bytes" json:"max_body_bytes,omitempty"`
	// Batch is the number of items written per transaction. Defaults to
	// 1000.
	Batch int `yaml:"batch" json:"batch,omitempty"`
}

// ArchiveConfig configures the archiver.
type ArchiveConfig struct {
	// Every is how often serve runs an archive pass. Defaults to 1h.
	Every Duration `yaml:"every" json:"every,omitempty"`
	// Batch is how many records move per batch. Defaults to 1000.
	Batch int `yaml:"batch" json:"batch,omitempty"`
	// Lease is how long one serve process holds the archiver without
	// finishing its pass; processes sharing a store take turns. Defaults
	// to Every plus one minute.
	Lease Duration `yaml:"lease" json:"lease,omitempty"`
}

// MonitorConfig configures crawl-round tracking.
type MonitorConfig struct {
	// Bucket is the default bucket length of a round. Defaults to 10m.
	Bucket Duration `yaml:"bucket" json:"bucket,omitempty"`
	// BucketRetention is how long after its end a merged bucket's set is
	// kept while its round is still open, before only its count remains.
	// Defaults to 7d.
	BucketRetention Duration `yaml:"bucket_retention" json:"bucket_retention,omitempty"`
	// BucketRetentionClosed is the same once the round is closed: nothing
	// queued in it remains, or a later round was created. Bucket sets say
	// which bucket each target was done in, which matters for the round
	// in progress; the counts of the throughput chart stay. Capped by
	// bucket_retention. Defaults to 1h.
	BucketRetentionClosed Duration `yaml:"bucket_retention_closed" json:"bucket_retention_closed,omitempty"`
	// Samples is how many sample records a rare field collects before it
	// is "enough". Defaults to 20.
	Samples int `yaml:"samples" json:"samples,omitempty"`
	// RareBelow is the fill rate under which a present field counts as
	// rare and is watched automatically. Defaults to 0.2.
	RareBelow float64 `yaml:"rare_below" json:"rare_below,omitempty"`
}

// PipelineConfig configures continuous reprocessing.
type PipelineConfig struct {
	// Period is the deadline for one rescan pass. Defaults to 24h.
	Period Duration `yaml:"period" json:"period,omitempty"`
	// Readers is the number of parallel range readers. Defaults to 2.
	Readers int `yaml:"readers" json:"readers,omitempty"`
	// Workers is the number of processing workers. Defaults to the CPUs.
	Workers int `yaml:"workers" json:"workers,omitempty"`
	// MaxRate caps records read per second by the rescan; 0 is no cap.
	MaxRate float64 `yaml:"max_rate" json:"max_rate,omitempty"`
	// Batch is the number of records read per query. Defaults to 500.
	Batch int `yaml:"batch" json:"batch,omitempty"`
	// Processors is the chain, in order. Defaults to [dates, fingerprint, stats].
	Processors []string `yaml:"processors" json:"processors,omitempty"`
	// MaxFailures sends a record to the dead letters after this many
	// failures. Defaults to 3.
	MaxFailures int `yaml:"max_failures" json:"max_failures,omitempty"`
	// Lease is how long a serve process holds the scan without renewing
	// it; when it dies, another process sharing the store takes over after
	// at most this long. Defaults to 2m.
	Lease Duration `yaml:"lease" json:"lease,omitempty"`
	// Exec configures the exec processor.
	Exec ExecConfig `yaml:"exec" json:"exec,omitempty"`
	// Fingerprint configures the near-duplicate processor.
	Fingerprint FingerprintConfig `yaml:"fingerprint" json:"fingerprint,omitempty"`
}

// FingerprintConfig configures the fingerprint processor's near-duplicate
// grouping (processors.Fingerprint).
type FingerprintConfig struct {
	// Threshold is the smallest estimated Jaccard similarity of the sets
	// of neighbouring word pairs of two near-duplicate texts, above 0 and
	// at most 1. Defaults to 0.5 (docs/KEYS.md has the measurements).
	Threshold float64 `yaml:"threshold" json:"threshold,omitempty"`
	// MinWords is the fewest words a text needs to be fingerprinted.
	// Defaults to 5.
	MinWords int `yaml:"min_words" json:"min_words,omitempty"`
}

// ExecConfig configures the external-program processor.
type ExecConfig struct {
	// Command is the program and its arguments.
	Command []string `yaml:"command" json:"command,omitempty"`
	// Timeout bounds one record's processing. Defaults to 10s.
	Timeout Duration `yaml:"timeout" json:"timeout,omitempty"`
	// Version is the processor version; change it to reprocess all.
	Version int `yaml:"version" json:"version,omitempty"`
}

// ServeConfig configures the HTTP server.
type ServeConfig struct {
	// Addr is the listen address. Defaults to 127.0.0.1:8080.
	Addr string `yaml:"addr" json:"addr,omitempty"`
	// Tokens are the accepted bearer tokens and their scopes.
	Tokens []TokenConfig `yaml:"tokens" json:"-"`
}

// TokenConfig is one API token.
type TokenConfig struct {
	// Name identifies the token in logs; the token itself is never logged.
	Name string `yaml:"name" json:"name"`
	// Token is the secret sent as "Authorization: Bearer".
	Token string `yaml:"token" json:"-"`
	// Scopes are any of ingest, read, admin.
	Scopes []string `yaml:"scopes" json:"scopes"`
}

// AlertsConfig configures alert rules and where they are delivered.
type AlertsConfig struct {
	// Webhooks receive every alert when it fires and when it resolves.
	Webhooks []WebhookConfig `yaml:"webhooks" json:"webhooks,omitempty"`
	// Rules are the conditions evaluated by serve.
	Rules []AlertRule `yaml:"rules" json:"rules,omitempty"`
	// Every is how often rules are evaluated. Defaults to 1m.
	Every Duration `yaml:"every" json:"every,omitempty"`
}

// WebhookConfig is one alert destination.
type WebhookConfig struct {
	// URL receives a POST per alert event (http or https).
	URL string `yaml:"url" json:"url"`
	// Format is "json" (default: the whole event) or "slack" (a
	// {"text": ...} body that Slack, Mattermost and Rocket.Chat accept).
	Format string `yaml:"format" json:"format,omitempty"`
}

// AlertRule is one alert condition. Kind selects the condition (see the
// Alert* kinds); the other fields parameterise it as each kind documents.
type AlertRule struct {
	// Name identifies the rule in alerts and in its state. Defaults to
	// the kind, followed by the source, round or field when set.
	Name string `yaml:"name" json:"name"`
	// Kind is one of round_stalled, ingest_stopped, date_errors,
	// freshness, fill_rate, dead_letters.
	Kind string `yaml:"kind" json:"kind"`
	// Source limits the rule to one source; empty evaluates every source
	// (ingest_stopped, date_errors, fill_rate).
	Source string `yaml:"source" json:"source,omitempty"`
	// Round is the round to watch (round_stalled) or to compare with the
	// round before it (fill_rate). Defaults to the newest round.
	Round string `yaml:"round" json:"round,omitempty"`
	// RoundPrefix makes round_stalled watch the newest round whose name
	// starts with it ("events-" for rounds named events-1, events-2, ...),
	// so one rule follows each crawler's rounds when several crawlers
	// start rounds side by side. Not with Round.
	RoundPrefix string `yaml:"round_prefix" json:"round_prefix,omitempty"`
	// Field is the watched field of fill_rate.
	Field string `yaml:"field" json:"field,omitempty"`
	// Buckets is how many buckets without a done target make a round
	// stalled. Defaults to 3.
	Buckets int `yaml:"buckets" json:"buckets,omitempty"`
	// For is the period of ingest_stopped (defaults to 1h) and of
	// freshness (defaults to pipeline.period).
	For Duration `yaml:"for" json:"for,omitempty"`
	// Threshold: the share of active records with date errors above which
	// date_errors fires (defaults to 0.05); the relative drop of the fill
	// rate against the previous round above which fill_rate fires
	// (defaults to 0.2, i.e. 20% lower); the number of dead letters above
	// which dead_letters fires (defaults to 0).
	Threshold float64 `yaml:"threshold" json:"threshold,omitempty"`
}

// SourcePolicy is the resolved configuration of one source: every field
// set, zones loaded, patterns checked.
type SourcePolicy struct {
	Source           string
	Key              []string
	Volatile         []string
	EventFields      []string
	EventStartFields []string
	Location         *time.Location
	Locale           string
	Languages        []string
	DateOrder        string
	MaxAge           time.Duration // 0 = off
	StaleAfter       time.Duration // 0 = off
	Event            bool
	Grace            time.Duration
	PurgeAfter       time.Duration // 0 = off
	HistoryLimit     int
	WatchFields      []string
	HTMLField        string
	Extract          map[string]string
	// URLRules canonicalise URL key fields.
	URLRules *canon.URLRules
	// FoldTitle folds the title key field (TitleKeyRules.Fold).
	FoldTitle bool
	// KeepTitleEntities keeps HTML character references in the title key
	// field as text (TitleKeyRules.KeepEntities).
	KeepTitleEntities bool
	Search            bool
	SearchFields      []string
	SearchLanguage    string

	eventSet map[string]bool
	startSet map[string]bool
	volExact map[string]bool
	volGlob  []string
	// volCache remembers IsVolatile per field name: crawls repeat the
	// same field names, and glob matching each time is costly.
	volCache sync.Map
}

// Validate resolves every source once and reports the first problem, so a
// bad configuration fails at start instead of at the first item.
func (c *Config) Validate() error {
	if _, err := c.DefaultPolicy(); err != nil {
		return err
	}
	names := make([]string, 0, len(c.Sources))
	for name := range c.Sources {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		if _, err := c.Policy(name); err != nil {
			return err
		}
	}
	if err := c.Alerts.Validate(); err != nil {
		return err
	}
	if err := c.Store.Durability.Validate(); err != nil {
		return err
	}
	if fp := c.Pipeline.Fingerprint; fp.Threshold < 0 || fp.Threshold > 1 || fp.MinWords < 0 {
		return Errorf(EINVALID, "config: pipeline.fingerprint: threshold must be from 0 to 1 (a Jaccard similarity; 0 means the default 0.5) and min_words not negative")
	}
	for i, t := range c.Serve.Tokens {
		if t.Token == "" {
			return Errorf(EINVALID, "config: serve.tokens[%d] has no token", i)
		}
		for _, s := range t.Scopes {
			if s != ScopeIngest && s != ScopeRead && s != ScopeAdmin {
				return Errorf(EINVALID, "config: serve.tokens[%d]: unknown scope %q (use ingest, read or admin)", i, s)
			}
		}
	}
	return nil
}

// API token scopes.
const (
	ScopeIngest = "ingest"
	ScopeRead   = "read"
	ScopeAdmin  = "admin"
)

// Policy returns the resolved configuration of source. It is safe for
// concurrent use; results are cached.
func (c *Config) Policy(source string) (*SourcePolicy, error) {
	return c.policy(source, true)
}

// DefaultPolicy returns the policy of every source without an override.
func (c *Config) DefaultPolicy() (*SourcePolicy, error) {
	return c.policy("", false)
}

func (c *Config) policy(source string, override bool) (*SourcePolicy, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	cacheKey := source
	if !override {
		cacheKey = "\x00defaults"
	}
	if p, ok := c.resolved[cacheKey]; ok {
		return p, nil
	}
	p, err := c.resolve(source, override)
	if err != nil {
		return nil, err
	}
	if c.resolved == nil {
		c.resolved = make(map[string]*SourcePolicy)
	}
	c.resolved[cacheKey] = p
	return p, nil
}

func (c *Config) resolve(source string, override bool) (*SourcePolicy, error) {
	d := c.Defaults
	s, ok := c.Sources[source]
	if !ok || !override {
		ok = false
		s = SourceConfig{}
	}
	where := "defaults"
	if ok {
		where = fmt.Sprintf("sources[%q]", source)
	}
	p := &SourcePolicy{
		Source:           source,
		Key:              pickStrings(s.Key, d.Key, DefaultKeyFields),
		Volatile:         pickStrings(s.Volatile, d.Volatile, DefaultVolatileFields),
		EventFields:      pickStrings(s.EventFields, d.EventFields, DefaultEventFields),
		EventStartFields: pickStrings(s.EventStartFields, d.EventStartFields, DefaultEventStartFields),
		Locale:           pickString(s.Locale, d.Locale, ""),
		Languages:        pickStrings(s.Languages, d.Languages, nil),
		DateOrder:        strings.ToUpper(pickString(s.DateOrder, d.DateOrder, "")),
		MaxAge:           pickDuration(s.MaxAge, d.MaxAge, DefaultMaxAge).D(),
		StaleAfter:       pickDuration(s.StaleAfter, d.StaleAfter, 0).D(),
		Event:            pickBool(s.Event, d.Event, true),
		Grace:            pickDuration(s.Grace, d.Grace, 0).D(),
		PurgeAfter:       pickDuration(s.PurgeAfter, d.PurgeAfter, 0).D(),
		HistoryLimit:     pickInt(s.HistoryLimit, d.HistoryLimit, DefaultHistoryLimit),
		WatchFields:      pickStrings(s.WatchFields, d.WatchFields, nil),
		HTMLField:        pickString(s.HTMLField, d.HTMLField, "html"),
		Extract:          s.Extract,
		Search:           pickBool(s.Search, d.Search, true),
		SearchFields:     pickStrings(s.SearchFields, d.SearchFields, nil),
		SearchLanguage:   pickString(s.SearchLanguage, d.SearchLanguage, "simple"),
	}
	if p.Extract == nil {
		p.Extract = d.Extract
	}
	su, du := s.KeyRules.URL, d.KeyRules.URL
	urlRules, err := canon.NewURLRules(canon.URLOptions{
		Off:                !pickBool(su.Canonical, du.Canonical, true),
		DropParams:         pickStrings(su.DropParams, du.DropParams, nil),
		KeepParams:         pickStrings(su.KeepParams, du.KeepParams, nil),
		KeepTrailingSlash:  pickBool(su.KeepTrailingSlash, du.KeepTrailingSlash, false),
		FoldWWW:            pickBool(su.FoldWWW, du.FoldWWW, false),
		KeepScheme:         pickBool(su.KeepScheme, du.KeepScheme, false),
		KeepDirectoryIndex: pickBool(su.KeepDirectoryIndex, du.KeepDirectoryIndex, false),
	})
	if err != nil {
		return nil, Errorf(EINVALID, "config %s: key_rules.url: %v", where, err)
	}
	p.URLRules = urlRules
	p.FoldTitle = pickBool(s.KeyRules.Title.Fold, d.KeyRules.Title.Fold, true)
	p.KeepTitleEntities = pickBool(s.KeyRules.Title.KeepEntities, d.KeyRules.Title.KeepEntities, false)
	tz := pickString(s.TimeZone, d.TimeZone, "UTC")
	loc, err := time.LoadLocation(tz)
	if err != nil {
		return nil, Errorf(EINVALID, "config %s: unknown timezone %q: use an IANA name such as Europe/Berlin or UTC", where, tz)
	}
	p.Location = loc
	switch p.DateOrder {
	case "", "DMY", "MDY", "YMD":
	default:
		return nil, Errorf(EINVALID, "config %s: date_order %q: use DMY, MDY or YMD", where, p.DateOrder)
	}
	if len(p.Key) == 0 {
		return nil, Errorf(EINVALID, "config %s: key must name at least one field", where)
	}
	if !validSearchLanguage(p.SearchLanguage) {
		return nil, Errorf(EINVALID, "config %s: search_language %q: use a PostgreSQL text search configuration name such as simple, english or german", where, p.SearchLanguage)
	}
	if p.HistoryLimit < 0 {
		return nil, Errorf(EINVALID, "config %s: history_limit must not be negative", where)
	}
	p.eventSet = toSet(p.EventFields)
	p.startSet = toSet(p.EventStartFields)
	p.volExact = map[string]bool{}
	for _, v := range p.Volatile {
		if _, err := path.Match(v, "x"); err != nil {
			return nil, Errorf(EINVALID, "config %s: volatile pattern %q: %v", where, v, err)
		}
		if strings.ContainsAny(v, "*?[") {
			p.volGlob = append(p.volGlob, v)
		} else {
			p.volExact[v] = true
		}
	}
	return p, nil
}

// IsVolatile reports whether the top-level field name is volatile. Event
// fields and key fields are never volatile: a changed deadline or title is
// a content change even when its name matches a pattern like "*_at".
func (p *SourcePolicy) IsVolatile(name string) bool {
	if v, ok := p.volCache.Load(name); ok {
		return v.(bool)
	}
	v := p.isVolatile(name)
	p.volCache.Store(name, v)
	return v
}

func (p *SourcePolicy) isVolatile(name string) bool {
	if p.eventSet[name] || p.isKeyField(name) {
		return false
	}
	if p.volExact[name] {
		return true
	}
	for _, g := range p.volGlob {
		if ok, _ := path.Match(g, name); ok {
			return true
		}
	}
	return false
}

func (p *SourcePolicy) isKeyField(name string) bool {
	for _, k := range p.Key {
		if k == name {
			return true
		}
	}
	return false
}

// IsEventField reports whether name is one of the source's event fields.
func (p *SourcePolicy) IsEventField(name string) bool { return p.eventSet[name] }

// TakesRangeStart reports whether a date range in the event field name
// resolves to its start (events) rather than its end (deadlines).
func (p *SourcePolicy) TakesRangeStart(name string) bool { return p.startSet[name] }

func toSet(xs []string) map[string]bool {
	m := make(map[string]bool, len(xs))
	for _, x := range xs {
		m[x] = true
	}
	return m
}

func pickStrings(a, b, def []string) []string {
	if a != nil {
		return a
	}
	if b != nil {
		return b
	}
	return def
}

func pickString(a, b, def string) string {
	if a != "" {
		return a
	}
	if b != "" {
		return b
	}
	return def
}

func pickInt(a, b, def int) int {
	if a != 0 {
		return a
	}
	if b != 0 {
		return b
	}
	return def
}

func pickDuration(a, b *Duration, def Duration) Duration {
	if a != nil {
		return *a
	}
	if b != nil {
		return *b
	}
	return def
}

func pickBool(a, b *bool, def bool) bool {
	if a != nil {
		return *a
	}
	if b != nil {
		return *b
	}
	return def
}
