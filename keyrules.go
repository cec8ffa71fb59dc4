package crawlkeeper

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/crawlkeeper/crawlkeeper/canon"
)

// KeyRulesVersion numbers the built-in way keys are built from key fields
// (key.go). Version 1 was the rules before canonical URLs and title folding;
// bump it whenever buildKey changes the key of any item. The rules of
// package canon have their own version (canon.Version), and both are part
// of KeyRulesFingerprint.
const KeyRulesVersion = 2

// KeyRulesFingerprint identifies the rules p builds keys under: the
// built-in rule versions, the tracking-parameter list, and every setting of
// the source that changes a key (key fields, key_rules, and the volatile
// and event fields the fallback key depends on). Two policies with one
// fingerprint build the same key for every item; when a store's records
// were keyed under another fingerprint, `crawlkeeper rekey` rebuilds them.
func (p *SourcePolicy) KeyRulesFingerprint() string {
	o := p.urlRules().Options()
	h := sha256.New()
	line := func(name string, values ...string) {
		fmt.Fprintf(h, "%s=%q\n", name, values)
	}
	sorted := func(xs []string, lower bool) []string {
		out := make([]string, len(xs))
		for i, x := range xs {
			if lower {
				x = strings.ToLower(x)
			}
			out[i] = x
		}
		sort.Strings(out)
		return out
	}
	line("rules", strconv.Itoa(KeyRulesVersion), strconv.Itoa(canon.Version))
	line("default_drop", canon.DefaultDropParams...)
	for _, host := range slices.Sorted(maps.Keys(canon.PlatformDropParams)) {
		line("platform_drop", append([]string{host}, canon.PlatformDropParams[host]...)...)
	}
	line("index_names", canon.IndexNames...)
	line("key", p.Key...)
	line("volatile", sorted(p.Volatile, false)...)
	line("event_fields", sorted(p.EventFields, false)...)
	line("url", strconv.FormatBool(!o.Off), strconv.FormatBool(o.KeepTrailingSlash), strconv.FormatBool(o.FoldWWW),
		strconv.FormatBool(o.KeepScheme), strconv.FormatBool(o.KeepDirectoryIndex))
	line("drop_params", sorted(o.DropParams, true)...)
	line("keep_params", sorted(o.KeepParams, true)...)
	line("title_fold", strconv.FormatBool(p.FoldTitle), strconv.FormatBool(p.KeepTitleEntities))
	return fmt.Sprintf("k%d-%s", KeyRulesVersion, hex.EncodeToString(h.Sum(nil)[:8]))
}

// KeyRulesFingerprint returns the key-rules fingerprint of source under
// cfg (see SourcePolicy.KeyRulesFingerprint).
func KeyRulesFingerprint(cfg *Config, source string) (string, error) {
	if cfg == nil {
		cfg = &Config{}
	}
	p, err := cfg.Policy(source)
	if err != nil {
		return "", err
	}
	return p.KeyRulesFingerprint(), nil
}

// RecomputeKey returns the key and key parts a stored record gets under the
// policy of its source (p.Source is the record's source). item is the
// record's stored item (Record.Item, canonical JSON without metadata). It is
// what ingest computes for the item the crawler sent, so a record whose
// stored key differs was keyed under other rules; rekey is built on it.
func RecomputeKey(p *SourcePolicy, item json.RawMessage) (key string, parts []string, err error) {
	m, _, err := DecodeItem(item, Meta{})
	if err != nil {
		return "", nil, err
	}
	key, parts, _ = buildKey(p, m)
	return key, parts, nil
}

// KeyRulesState is the prefix of the state entries (StateStore) that hold
// the fingerprint each source's keys were built under.
const KeyRulesState = "key_rules:"

// keyRulesStateName returns the state entry of source; long source names
// are hashed to fit every backend's key length.
func keyRulesStateName(source string) string {
	if len(source) > 200 {
		sum := sha256.Sum256([]byte(source))
		return KeyRulesState + "sha256:" + hex.EncodeToString(sum[:])
	}
	return KeyRulesState + source
}

type keyRulesEntry struct {
	Fingerprint string `json:"fingerprint"`
}

// StoredKeyRules returns the fingerprint recorded for source in st, or ""
// when none is recorded.
func StoredKeyRules(ctx context.Context, st StateStore, source string) (string, error) {
	b, err := st.GetState(ctx, keyRulesStateName(source))
	if err != nil || b == nil {
		return "", err
	}
	var e keyRulesEntry
	if err := json.Unmarshal(b, &e); err != nil {
		return "", fmt.Errorf("read key rules of source %q: %w", source, err)
	}
	return e.Fingerprint, nil
}

// RecordKeyRules records that every key of source in st was built under
// fingerprint. Ingest does it for a source's first records; rekey does it
// once it has rebuilt every key of the source.
func RecordKeyRules(ctx context.Context, st StateStore, source, fingerprint string) error {
	b, _ := json.Marshal(keyRulesEntry{Fingerprint: fingerprint})
	return st.PutState(ctx, keyRulesStateName(source), b)
}

// KeyRulesBackend is what the key-rules guard needs of a store: records
// (whether a source has any) and state (the recorded fingerprints).
type KeyRulesBackend interface {
	RecordStore
	StateStore
}

// KeyRulesGuard checks that a store's keys were built under the current
// key rules, for each source as it is ingested, again at most every
// Every. On a source's first ingest into a store it records the
// fingerprint; when the store's records of the source were keyed under
// another fingerprint, or before fingerprints were recorded and under
// other rules, it warns: a re-crawl of an existing page would then become
// a second record until rekey rebuilds the keys. Checking again while a
// process runs is what makes a change of rules safe (docs/KEYS.md): a
// process still ingesting under the old rules after a rekey recorded the
// new fingerprint warns within Every. It never stops an ingest. It is safe
// for concurrent use.
type KeyRulesGuard struct {
	Store  KeyRulesBackend
	Config *Config
	// Warn receives each warning; nil drops them.
	Warn func(source, message string)
	// Every is how long a source's check holds before an ingest checks it
	// again (a warning repeats as often). Defaults to one minute.
	Every time.Duration
	// Now is the guard's clock. Defaults to time.Now.
	Now func() time.Time

	mu      sync.Mutex
	checked map[string]time.Time
}

// keyRulesSample is how many records of a source without a recorded
// fingerprint the guard re-keys to tell whether they were built under the
// current rules.
const keyRulesSample = 100

// Check checks source unless it was checked less than Every ago.
func (g *KeyRulesGuard) Check(ctx context.Context, source string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	now := time.Now()
	if g.Now != nil {
		now = g.Now()
	}
	every := g.Every
	if every <= 0 {
		every = time.Minute
	}
	if at, ok := g.checked[source]; ok && now.Sub(at) < every && !now.Before(at) {
		return
	}
	if g.checked == nil {
		g.checked = map[string]time.Time{}
	}
	msg, err := g.check(ctx, source)
	if err != nil {
		if ctx.Err() != nil {
			return // checked again by the next ingest
		}
		msg = fmt.Sprintf("source %q: could not check the key rules the store's keys were built under: %v", source, err)
	}
	g.checked[source] = now
	if msg != "" && g.Warn != nil {
		g.Warn(source, msg)
	}
}

// CheckStore checks every source the store holds records of, so serve warns
// at start rather than at a source's first delivery.
func (g *KeyRulesGuard) CheckStore(ctx context.Context) error {
	st, err := g.Store.Stats(ctx)
	if err != nil {
		return err
	}
	for _, name := range slices.Sorted(maps.Keys(st.Sources)) {
		g.Check(ctx, name)
	}
	return ctx.Err()
}

func (g *KeyRulesGuard) check(ctx context.Context, source string) (string, error) {
	want, err := KeyRulesFingerprint(g.Config, source)
	if err != nil {
		return "", err
	}
	have, err := StoredKeyRules(ctx, g.Store, source)
	if err != nil {
		return "", err
	}
	rekey := fmt.Sprintf("run `crawlkeeper rekey --source %s` to rebuild them under the current rules (docs/KEYS.md)", quoteArg(source))
	switch {
	case have == want:
		return "", nil
	case have != "":
		return fmt.Sprintf("source %q: the store's keys were built under other key rules (fingerprint %s, now %s), so a re-crawl of an existing page may become a second record; %s", source, have, want, rekey), nil
	}
	// No fingerprint: a source new to the store, or records from before
	// fingerprints were recorded. Those are re-keyed from a sample: keys
	// that the current rules build again were built under them.
	p, err := g.config().Policy(source)
	if err != nil {
		return "", err
	}
	sampled, differ, err := g.sampleKeys(ctx, p)
	if err != nil {
		return "", err
	}
	if differ > 0 {
		return fmt.Sprintf("source %q: %d of %d sampled records have keys built before key rules were recorded, under other rules (without canonical URLs and title folding), so a re-crawl of an existing page may become a second record; %s", source, differ, sampled, rekey), nil
	}
	return "", RecordKeyRules(ctx, g.Store, source, want)
}

func (g *KeyRulesGuard) config() *Config {
	if g.Config == nil {
		return &Config{}
	}
	return g.Config
}

// sampleKeys re-keys up to keyRulesSample of the most recently delivered
// records of p's source (active, then archived) under p and counts those
// whose stored key differs. Records whose items cannot be read keep their
// keys and are not counted.
func (g *KeyRulesGuard) sampleKeys(ctx context.Context, p *SourcePolicy) (sampled, differ int, err error) {
	for _, archived := range []bool{false, true} {
		if sampled >= keyRulesSample {
			break
		}
		page, err := g.Store.List(ctx, RecordQuery{Source: p.Source, ExactSource: true, Archived: archived, Order: OrderNewest, Limit: keyRulesSample - sampled})
		if err != nil {
			return sampled, differ, err
		}
		for _, r := range page.Records {
			key, _, err := RecomputeKey(p, r.Item)
			if err != nil {
				continue
			}
			sampled++
			if key != r.Key {
				differ++
			}
		}
	}
	return sampled, differ, nil
}

// quoteArg quotes a source name for a shell command line when it needs it.
func quoteArg(s string) string {
	if s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r == '-' || r == '_' || r == '.' || r == '/' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z')
	}) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
