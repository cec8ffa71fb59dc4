// Package redis is crawlkeeper's crawl monitor on Redis 7 or later
// (github.com/redis/go-redis/v9), selected with --monitor
// redis://host:port/db. Sets are native Redis bitmaps indexed by the
// target's dictionary id: marks are SETBIT, counts BITCOUNT, merges and
// differences BITOP. Multi-key steps run as Lua scripts, so each is
// atomic; marks are sent in pipelines of scripts of up to 10,000 ids.
//
// Key layout, all under a prefix (default "crawlkeeper", set with
// ?prefix=NAME in the URL), readable with redis-cli:
//
//	P:dict:...                    hashes the target dictionary (see dict.go)
//	P:target_next                 string the next id (INCR; ids are dense from 0)
//	P:rounds                      zset   round names, scored by creation (Unix µs)
//	P:round:R:meta                hash   bucket (seconds), created (Unix µs)
//	P:round:R:queued              bitmap queued targets
//	P:round:R:done                bitmap done targets of merged buckets
//	P:round:R:failed              bitmap failed targets
//	P:round:R:reasons             hash   id → latest failure reason
//	P:round:R:bucket:S            bitmap targets done in the bucket starting at S (Unix s)
//	P:round:R:buckets             hash   bucket start → done count (kept after drops)
//	P:round:R:open                zset   buckets not merged yet, scored by start
//	P:round:R:kept                zset   merged buckets whose sets are still kept
//	P:sources                     set    sources with field observations
//	P:fields:SRC                  set    field names seen for a source
//	P:field:SRC:F                 hash   present, filled, enough, targets, r:ROUND:present, r:ROUND:filled
//	P:field:SRC:F:samples         list   sample record ids
//	P:field:SRC:F:targets         bitmap targets where the field had a value (deleted once enough)
//
// For example `redis-cli BITCOUNT crawlkeeper:round:7:queued` counts the
// targets queued in round 7, and `redis-cli HGET crawlkeeper:dict:i:0 5`
// gives the name of the target at bit offset 5 (`crawlkeeper target NAME`
// gives a name's offset).
//
// Durability: a mark is acknowledged once Redis has applied it. It then
// survives a crash of crawlkeeper; it survives a crash of Redis as far as
// Redis persistence is configured (appendonly yes with appendfsync
// everysec loses at most a second).
package redis

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/crawlkeeper/crawlkeeper"
	goredis "github.com/redis/go-redis/v9"
)

func init() {
	// Connection failures come back as errors with a message that says
	// what to do; the client's own log lines would only repeat them.
	goredis.SetLogger(quietLogger{})
}

type quietLogger struct{}

func (quietLogger) Printf(context.Context, string, ...any) {}

// DefaultPrefix is the key prefix when the URL sets none.
const DefaultPrefix = "crawlkeeper"

// chunk bounds the ids one script call carries, so no call blocks Redis
// for long.
const chunk = 10000

// Monitor is the Redis implementation of crawlkeeper.Monitor.
type Monitor struct {
	c      *goredis.Client
	prefix string
	opts   crawlkeeper.MonitorOptions
	tmpSeq atomic.Int64
	tmpID  string
	// longName is the longest name an id hash of the dictionary takes.
	longName int

	// cache holds dictionary ids already read: an id, once given, never
	// changes, so a cached one is never stale.
	cacheMu sync.RWMutex
	cache   map[string]uint32
}

// maxCache bounds the id cache (about 100 bytes per name).
const maxCache = 2 << 20

var _ crawlkeeper.Monitor = (*Monitor)(nil)

// Open connects to the Redis server named by rawURL
// (redis://[user:password@]host:port/db[?prefix=NAME]) and checks that it
// answers.
func Open(ctx context.Context, rawURL string, opts crawlkeeper.MonitorOptions) (*Monitor, error) {
	u, err := url.Parse(rawURL)
	if err != nil {
		return nil, crawlkeeper.Errorf(crawlkeeper.EINVALID, "monitor URL %q: %v", rawURL, err)
	}
	q := u.Query()
	prefix := q.Get("prefix")
	if prefix == "" {
		prefix = DefaultPrefix
	}
	q.Del("prefix")
	u.RawQuery = q.Encode()
	o, err := goredis.ParseURL(u.String())
	if err != nil {
		return nil, crawlkeeper.Errorf(crawlkeeper.EINVALID, "monitor URL %q: %v (use redis://host:port/db)", u.Redacted(), err)
	}
	c := goredis.NewClient(o)
	if err := c.Ping(ctx).Err(); err != nil {
		c.Close()
		return nil, &crawlkeeper.Error{Code: crawlkeeper.EUNAVAILABLE, Message: fmt.Sprintf("cannot reach Redis at %s: start it or check --monitor", o.Addr), Err: err}
	}
	m := &Monitor{c: c, prefix: prefix, opts: opts.WithDefaults(), tmpID: strconv.FormatInt(time.Now().UnixNano(), 36),
		cache: map[string]uint32{}, longName: longName(ctx, c)}
	if err := m.migrateLayout(ctx); err != nil {
		c.Close()
		return nil, fail("migrate the key layout", err)
	}
	return m, nil
}

// Client returns the Redis client, for tests that inspect keys.
func (m *Monitor) Client() *goredis.Client { return m.c }

// Clear deletes every key under the monitor's prefix. The bench clears
// its scratch prefixes with it; the prefix should name nothing else, as
// a prefix "a" also matches the keys of a prefix "a:b".
func (m *Monitor) Clear(ctx context.Context) error {
	it := m.c.Scan(ctx, 0, escapeGlob(m.prefix)+":*", 1000).Iterator()
	var batch []string
	for it.Next(ctx) {
		batch = append(batch, it.Val())
		if len(batch) == 1000 {
			if err := m.c.Unlink(ctx, batch...).Err(); err != nil {
				return fail("clear", err)
			}
			batch = batch[:0]
		}
	}
	if err := it.Err(); err != nil {
		return fail("clear", err)
	}
	if len(batch) > 0 {
		if err := m.c.Unlink(ctx, batch...).Err(); err != nil {
			return fail("clear", err)
		}
	}
	return nil
}

// escapeGlob escapes the characters SCAN's MATCH pattern treats as
// special.
func escapeGlob(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch r {
		case '*', '?', '[', ']', '\\':
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
}

// Close implements crawlkeeper.Monitor.
func (m *Monitor) Close() error { return m.c.Close() }

// key names a key: the prefix, then parts joined by ':', each escaped
// (see escapePart).
func (m *Monitor) key(parts ...string) string {
	var b strings.Builder
	b.WriteString(m.prefix)
	for _, p := range parts {
		b.WriteByte(':')
		b.WriteString(escapePart(p))
	}
	return b.String()
}

// roundPrefix is the prefix of a round's keys, ending in ":".
func (m *Monitor) roundPrefix(round string) string { return m.key("round", round) + ":" }

func (m *Monitor) fieldKey(source, field string) string { return m.key("field", source, field) }

// tmp returns a temporary key name unique to this call; scripts delete
// their temporary keys before they return.
func (m *Monitor) tmp() string {
	return m.key("tmp", m.tmpID, strconv.FormatInt(m.tmpSeq.Add(1), 10))
}

func fail(what string, err error) error {
	if err == nil {
		return nil
	}
	var e *crawlkeeper.Error
	if errors.As(err, &e) || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	return &crawlkeeper.Error{Code: crawlkeeper.EUNAVAILABLE, Message: "redis monitor: " + what, Err: err}
}

// ids returns the dictionary ids of names (distinct), adding unknown ones,
// and how many were new.
func (m *Monitor) ids(ctx context.Context, names []string) (map[string]uint32, int, error) {
	out := make(map[string]uint32, len(names))
	var lookup []string
	m.cacheMu.RLock()
	for _, n := range names {
		if id, ok := m.cache[n]; ok {
			out[n] = id
		} else {
			lookup = append(lookup, n)
		}
	}
	m.cacheMu.RUnlock()
	if len(lookup) == 0 {
		return out, 0, nil
	}
	ids, added, err := m.lookupIDs(ctx, lookup, true)
	if err != nil {
		return nil, 0, fail("add targets", err)
	}
	for i, n := range lookup {
		out[n] = uint32(ids[i])
	}
	m.cacheMu.Lock()
	if len(m.cache)+len(lookup) <= maxCache {
		for _, n := range lookup {
			m.cache[n] = out[n]
		}
	}
	m.cacheMu.Unlock()
	return out, added, nil
}

func distinct(names []string) []string {
	seen := make(map[string]bool, len(names))
	out := make([]string, 0, len(names))
	for _, n := range names {
		if !seen[n] {
			seen[n] = true
			out = append(out, n)
		}
	}
	return out
}

// ensure creates round if needed and returns its bucket length in seconds.
func (m *Monitor) ensure(ctx context.Context, round string, created time.Time, want time.Duration) (int64, error) {
	b, err := ensureRound.Run(ctx, m.c, []string{m.key("rounds")}, m.roundPrefix(round), round,
		created.UnixMicro(), int64(want/time.Second), int64(m.opts.Bucket/time.Second)).Int64()
	if err != nil {
		return 0, fail("create round", err)
	}
	if b < 0 {
		return 0, crawlkeeper.Errorf(crawlkeeper.EINVALID, "round %q already has %s buckets with marks: its bucket length cannot change (leave out --bucket)", round, time.Duration(-b)*time.Second)
	}
	return b, nil
}

// Queue implements crawlkeeper.Monitor.
func (m *Monitor) Queue(ctx context.Context, q crawlkeeper.QueueRequest) (*crawlkeeper.QueueResult, error) {
	if err := crawlkeeper.ValidateRound(q.Round); err != nil {
		return nil, err
	}
	if q.Bucket != 0 {
		if err := crawlkeeper.ValidateBucket(q.Bucket); err != nil {
			return nil, err
		}
	}
	for _, n := range q.Targets {
		if err := crawlkeeper.ValidateTarget(n); err != nil {
			return nil, err
		}
	}
	if q.At.IsZero() {
		q.At = time.Now()
	}
	if _, err := m.ensure(ctx, q.Round, q.At, q.Bucket); err != nil {
		return nil, err
	}
	names := distinct(q.Targets)
	ids, added, err := m.ids(ctx, names)
	if err != nil {
		return nil, err
	}
	total, err := m.setBits(ctx, m.roundPrefix(q.Round)+"queued", idList(ids))
	if err != nil {
		return nil, err
	}
	if total < 0 {
		total, err = m.c.BitCount(ctx, m.roundPrefix(q.Round)+"queued", nil).Result()
		if err != nil {
			return nil, fail("count queued", err)
		}
	}
	return &crawlkeeper.QueueResult{Round: q.Round, Queued: len(names), NewTargets: added, Total: total}, nil
}

func idList(ids map[string]uint32) []uint32 {
	out := make([]uint32, 0, len(ids))
	for _, id := range ids {
		out = append(out, id)
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out
}

// setBits sets ids in key and returns the key's count afterwards (-1
// when there was nothing to set).
func (m *Monitor) setBits(ctx context.Context, key string, ids []uint32) (int64, error) {
	if len(ids) == 0 {
		return -1, nil
	}
	pipe := m.c.Pipeline()
	var last *goredis.Cmd
	for _, part := range m.idArgs(ids) {
		last = setBits.Eval(ctx, pipe, nil, append([]any{key}, part...)...)
	}
	if _, err := pipe.Exec(ctx); err != nil {
		return 0, fail("set bits", err)
	}
	return last.Int64()
}

// idArgs encodes sorted ids for luaAddIDs, in one or more script calls. A
// batch dense enough goes as one bitmap in Redis bit order (the first bit
// is the high bit of the first byte), which Redis ORs in one step: 10,000
// marks among 400,000 targets are a 50 KB string instead of 10,000 SETBIT
// calls. Sparse batches go as offsets, chunk by chunk.
func (m *Monitor) idArgs(ids []uint32) [][]any {
	maxID := ids[len(ids)-1]
	if size := int(maxID)/8 + 1; size <= 16*len(ids) || size <= 4096 {
		bm := make([]byte, size)
		for _, id := range ids {
			bm[id/8] |= 0x80 >> (id % 8)
		}
		return [][]any{{"b", m.tmp(), bm}}
	}
	var out [][]any
	for i := 0; i < len(ids); i += chunk {
		args := []any{"i", ""}
		for _, id := range ids[i:min(i+chunk, len(ids))] {
			args = append(args, id)
		}
		out = append(out, args)
	}
	return out
}

// Mark implements crawlkeeper.Monitor.
func (m *Monitor) Mark(ctx context.Context, marks []crawlkeeper.Mark) (int, error) {
	if len(marks) == 0 {
		return 0, nil
	}
	if err := crawlkeeper.ValidateMarks(marks); err != nil {
		return 0, err
	}
	buckets := map[string]int64{}
	var names []string
	for _, mk := range marks {
		if _, ok := buckets[mk.Round]; !ok {
			b, err := m.ensure(ctx, mk.Round, mk.At, 0)
			if err != nil {
				return 0, err
			}
			buckets[mk.Round] = b
		}
		names = append(names, mk.Target)
	}
	ids, _, err := m.ids(ctx, distinct(names))
	if err != nil {
		return 0, err
	}
	type gk struct {
		round string
		kind  crawlkeeper.MarkKind
		start int64
	}
	groups := map[gk][]uint32{}
	var order []gk
	// The latest reason of each failed target, by round: one HSET each.
	reasons := map[string]map[uint32]string{}
	for _, mk := range marks {
		if reason := crawlkeeper.CleanReason(mk.Reason); mk.Kind == crawlkeeper.MarkFailed && reason != "" {
			rs := reasons[mk.Round]
			if rs == nil {
				rs = map[uint32]string{}
				reasons[mk.Round] = rs
			}
			rs[ids[mk.Target]] = reason
		}
		k := gk{round: mk.Round, kind: mk.Kind}
		if mk.Kind == crawlkeeper.MarkDone {
			k.start = crawlkeeper.BucketStart(mk.At, time.Duration(buckets[mk.Round])*time.Second).Unix()
		}
		if _, ok := groups[k]; !ok {
			order = append(order, k)
		}
		groups[k] = append(groups[k], ids[mk.Target])
	}
	pipe := m.c.Pipeline()
	for _, k := range order {
		p := m.roundPrefix(k.round)
		ids := groups[k]
		sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
		for _, part := range m.idArgs(ids) {
			if k.kind == crawlkeeper.MarkDone {
				markDone.Eval(ctx, pipe, nil, append([]any{p, k.start}, part...)...)
			} else {
				setBits.Eval(ctx, pipe, nil, append([]any{p + string(k.kind)}, part...)...)
			}
		}
	}
	for round, rs := range reasons {
		args := make([]any, 0, 2*len(rs))
		for id, reason := range rs {
			args = append(args, id, reason)
		}
		pipe.HSet(ctx, m.roundPrefix(round)+"reasons", args...)
	}
	if _, err := pipe.Exec(ctx); err != nil {
		return 0, fail("mark", err)
	}
	return len(marks), nil
}

// roundNames returns every round with its creation time, oldest first.
func (m *Monitor) roundNames(ctx context.Context) ([]goredis.Z, error) {
	zs, err := m.c.ZRangeWithScores(ctx, m.key("rounds"), 0, -1).Result()
	if err != nil {
		return nil, fail("list rounds", err)
	}
	return zs, nil
}

// MergeBuckets implements crawlkeeper.Monitor.
func (m *Monitor) MergeBuckets(ctx context.Context, now time.Time) (*crawlkeeper.MergeResult, error) {
	zs, err := m.roundNames(ctx)
	if err != nil {
		return nil, err
	}
	res := &crawlkeeper.MergeResult{}
	ret := int64(m.opts.BucketRetention / time.Second)
	cret := int64(m.opts.ClosedBucketRetention / time.Second)
	for i, z := range zs {
		later := 0
		if i < len(zs)-1 {
			later = 1
		}
		v, err := mergeRound.Run(ctx, m.c, nil, m.roundPrefix(z.Member.(string)), now.Unix(), ret, 1, cret, later, m.tmp(), m.tmp()).Int64Slice()
		if err != nil {
			return nil, fail("merge buckets", err)
		}
		res.Merged += int(v[0])
		res.Dropped += int(v[1])
	}
	return res, nil
}

type roundMeta struct {
	bucket  int64
	created time.Time
}

func (m *Monitor) meta(ctx context.Context, round string) (*roundMeta, error) {
	h, err := m.c.HGetAll(ctx, m.roundPrefix(round)+"meta").Result()
	if err != nil {
		return nil, fail("read round", err)
	}
	if len(h) == 0 {
		return nil, crawlkeeper.Errorf(crawlkeeper.ENOTFOUND, "round %q not found: queue it with `crawlkeeper round queue --round %s` or mark a target in it", round, round)
	}
	mk := m.roundPrefix(round) + "meta"
	b, err := count(mk, "bucket", h["bucket"])
	if err != nil {
		return nil, err
	}
	c, err := count(mk, "created", h["created"])
	if err != nil {
		return nil, err
	}
	return &roundMeta{bucket: b, created: crawlkeeper.MicrosTime(c)}, nil
}

func (m *Monitor) counts(ctx context.Context, round string) ([]int64, error) {
	v, err := roundCounts.Run(ctx, m.c, nil, m.roundPrefix(round), m.tmp(), m.tmp()).Int64Slice()
	if err != nil {
		return nil, fail("count round", err)
	}
	return v, nil
}

// Status implements crawlkeeper.Monitor. Bytes are the Redis memory
// (MEMORY USAGE) of the round's queued, done and failed keys.
func (m *Monitor) Status(ctx context.Context, round string) (*crawlkeeper.RoundStatus, error) {
	meta, err := m.meta(ctx, round)
	if err != nil {
		return nil, err
	}
	c, err := m.counts(ctx, round)
	if err != nil {
		return nil, err
	}
	p := m.roundPrefix(round)
	st := &crawlkeeper.RoundStatus{Round: round, Queued: c[0], Done: c[1], Failed: c[2], Remaining: c[3],
		Bucket: crawlkeeper.Duration(time.Duration(meta.bucket) * time.Second), CreatedAt: meta.created, Buckets: []crawlkeeper.BucketCount{}}
	pipe := m.c.Pipeline()
	countsCmd := pipe.HGetAll(ctx, p+"buckets")
	openCmd := pipe.ZRange(ctx, p+"open", 0, -1)
	keptCmd := pipe.ZRange(ctx, p+"kept", 0, -1)
	var sizes []*goredis.IntCmd
	for _, k := range []string{"queued", "done", "failed"} {
		sizes = append(sizes, pipe.MemoryUsage(ctx, p+k))
	}
	if _, err := pipe.Exec(ctx); err != nil && !errors.Is(err, goredis.Nil) {
		return nil, fail("read round", err)
	}
	for _, s := range sizes {
		if n, err := s.Result(); err == nil {
			st.Bytes += n
		}
	}
	open, kept := map[string]bool{}, map[string]bool{}
	for _, s := range openCmd.Val() {
		open[s] = true
	}
	for _, s := range keptCmd.Val() {
		kept[s] = true
	}
	pipe = m.c.Pipeline()
	var bsizes []*goredis.IntCmd
	for s := range kept {
		bsizes = append(bsizes, pipe.MemoryUsage(ctx, p+"bucket:"+s))
	}
	for s := range open {
		bsizes = append(bsizes, pipe.MemoryUsage(ctx, p+"bucket:"+s))
	}
	if len(bsizes) > 0 {
		pipe.Exec(ctx)
		for _, s := range bsizes {
			if n, err := s.Result(); err == nil {
				st.BucketBytes += n
			}
		}
	}
	for s, n := range countsCmd.Val() {
		start, err := count(p+"buckets", "field name", s)
		if err != nil {
			return nil, err
		}
		cnt, err := count(p+"buckets", s, n)
		if err != nil {
			return nil, err
		}
		st.Buckets = append(st.Buckets, crawlkeeper.BucketCount{Start: time.Unix(start, 0).UTC(), Done: cnt,
			Merged: !open[s], Dropped: !open[s] && !kept[s]})
	}
	sort.Slice(st.Buckets, func(i, j int) bool { return st.Buckets[i].Start.Before(st.Buckets[j].Start) })
	return st, nil
}

// afterBit returns the first bit to page from: one past after's id.
func (m *Monitor) afterBit(ctx context.Context, after string) (int64, error) {
	if after == "" {
		return 0, nil
	}
	id, err := m.idOf(ctx, after)
	if err != nil {
		return 0, err
	}
	return int64(id) + 1, nil
}

// names resolves ids to names, in order.
func (m *Monitor) names(ctx context.Context, ids []any) ([]string, error) {
	out := make([]string, 0, len(ids))
	if len(ids) == 0 {
		return out, nil
	}
	vals, err := dictNames.Run(ctx, m.c, nil, m.dictArgs(ids...)...).Slice()
	if err != nil {
		return nil, fail("read target names", err)
	}
	for i, v := range vals {
		s, ok := v.(string)
		if !ok {
			return nil, fail("read target names", fmt.Errorf("id %v has no name", ids[i]))
		}
		out = append(out, s)
	}
	return out, nil
}

// Remaining implements crawlkeeper.Monitor.
func (m *Monitor) Remaining(ctx context.Context, round, after string, limit int) ([]string, error) {
	if _, err := m.meta(ctx, round); err != nil {
		return nil, err
	}
	from, err := m.afterBit(ctx, after)
	if err != nil {
		return nil, err
	}
	ids, err := remainingPage.Run(ctx, m.c, nil, m.roundPrefix(round), m.tmp(), m.tmp(), from, crawlkeeper.PageLimit(limit)).Slice()
	if err != nil {
		return nil, fail("remaining", err)
	}
	return m.names(ctx, ids)
}

// Failed implements crawlkeeper.Monitor.
func (m *Monitor) Failed(ctx context.Context, q crawlkeeper.FailedQuery) (*crawlkeeper.FailedPage, error) {
	q, err := crawlkeeper.ValidateFailedQuery(q)
	if err != nil {
		return nil, err
	}
	for _, r := range []string{q.Round, q.Also} {
		if r == "" {
			continue
		}
		if _, err := m.meta(ctx, r); err != nil {
			return nil, err
		}
	}
	var later []string
	if q.DoneLater {
		zs, err := m.roundNames(ctx)
		if err != nil {
			return nil, err
		}
		for i, z := range zs {
			if z.Member.(string) == q.Round {
				for _, l := range zs[i+1:] {
					later = append(later, l.Member.(string))
				}
				break
			}
		}
	}
	from, err := m.afterBit(ctx, q.After)
	if err != nil {
		return nil, err
	}
	alsoPrefix, doneLater := "", "0"
	if q.Also != "" {
		alsoPrefix = m.roundPrefix(q.Also)
	}
	if q.DoneLater {
		doneLater = "1"
	}
	args := []any{m.roundPrefix(q.Round), alsoPrefix, m.tmp(), m.tmp(), m.tmp(), from, q.Limit + 1, doneLater}
	for _, l := range later {
		args = append(args, m.roundPrefix(l))
	}
	v, err := failedPage.Run(ctx, m.c, nil, args...).Slice()
	if err != nil {
		return nil, fail("failed", err)
	}
	if len(v) != 5 {
		return nil, fail("failed", fmt.Errorf("unexpected reply %v", v))
	}
	page := &crawlkeeper.FailedPage{Round: q.Round, Also: q.Also, DoneLater: q.DoneLater, Targets: []crawlkeeper.FailedTarget{}}
	page.Count, _ = v[0].(int64)
	ids, _ := v[1].([]any)
	reasons, _ := v[2].([]any)
	also, _ := v[3].([]any)
	donein, _ := v[4].([]any)
	names, err := m.names(ctx, ids)
	if err != nil {
		return nil, err
	}
	if len(reasons) != len(names) || len(also) != len(names) || len(donein) != len(names) {
		return nil, fail("failed", fmt.Errorf("unexpected reply %v", v))
	}
	for i, n := range names {
		ft := crawlkeeper.FailedTarget{Target: n}
		ft.Reason, _ = reasons[i].(string)
		ft.AlsoReason, _ = also[i].(string)
		if j, _ := donein[i].(int64); j > 0 && int(j) <= len(later) {
			ft.DoneIn = later[j-1]
		}
		page.Targets = append(page.Targets, ft)
	}
	if len(page.Targets) > q.Limit {
		page.Targets = page.Targets[:q.Limit]
		page.Next = page.Targets[q.Limit-1].Target
	}
	return page, nil
}

// Diff implements crawlkeeper.Monitor.
func (m *Monitor) Diff(ctx context.Context, a, b, after string, limit int) (*crawlkeeper.RoundDiff, error) {
	for _, r := range []string{a, b} {
		if _, err := m.meta(ctx, r); err != nil {
			return nil, err
		}
	}
	from, err := m.afterBit(ctx, after)
	if err != nil {
		return nil, err
	}
	v, err := diffPage.Run(ctx, m.c, nil, m.roundPrefix(a), m.roundPrefix(b), m.tmp(), m.tmp(), m.tmp(), m.tmp(), from, crawlkeeper.PageLimit(limit)).Slice()
	if err != nil {
		return nil, fail("diff", err)
	}
	d := &crawlkeeper.RoundDiff{Round: a, Vs: b}
	d.OnlyRound.Count, _ = v[0].(int64)
	d.OnlyVs.Count, _ = v[1].(int64)
	pa, _ := v[2].([]any)
	pb, _ := v[3].([]any)
	if d.OnlyRound.Names, err = m.names(ctx, pa); err != nil {
		return nil, err
	}
	if d.OnlyVs.Names, err = m.names(ctx, pb); err != nil {
		return nil, err
	}
	return d, nil
}

// Rounds implements crawlkeeper.Monitor.
func (m *Monitor) Rounds(ctx context.Context) ([]crawlkeeper.RoundSummary, error) {
	zs, err := m.roundNames(ctx)
	if err != nil {
		return nil, err
	}
	out := []crawlkeeper.RoundSummary{}
	for _, z := range zs {
		name := z.Member.(string)
		meta, err := m.meta(ctx, name)
		if err != nil {
			return nil, err
		}
		c, err := m.counts(ctx, name)
		if err != nil {
			return nil, err
		}
		out = append(out, crawlkeeper.RoundSummary{Round: name, CreatedAt: meta.created,
			Bucket: crawlkeeper.Duration(time.Duration(meta.bucket) * time.Second), Queued: c[0], Done: c[1], Failed: c[2], Remaining: c[3]})
	}
	return out, nil
}

// Target implements crawlkeeper.Monitor.
func (m *Monitor) Target(ctx context.Context, name string) (*crawlkeeper.TargetStatus, error) {
	from, err := m.afterBit(ctx, name)
	if err != nil {
		return nil, err
	}
	id := from - 1
	zs, err := m.roundNames(ctx)
	if err != nil {
		return nil, err
	}
	ts := &crawlkeeper.TargetStatus{Target: name, ID: uint32(id), Rounds: []crawlkeeper.TargetRound{}}
	if len(zs) == 0 {
		return ts, nil
	}
	args := []any{id}
	for _, z := range zs {
		args = append(args, m.roundPrefix(z.Member.(string)))
	}
	v, err := targetState.Run(ctx, m.c, nil, args...).Slice()
	if err != nil {
		return nil, fail("target", err)
	}
	for i, z := range zs {
		row, _ := v[i].([]any)
		if len(row) != 5 {
			return nil, fail("target", fmt.Errorf("unexpected reply %v", v[i]))
		}
		q, d, f, at := row[0].(int64), row[1].(int64), row[2].(int64), row[3].(int64)
		tr := crawlkeeper.TargetRound{Round: z.Member.(string), Queued: q == 1, Done: d == 1, Failed: f == 1}
		tr.Reason, _ = row[4].(string)
		if at >= 0 {
			t := time.Unix(at, 0).UTC()
			tr.DoneAt = &t
		}
		if tr.Queued || tr.Done || tr.Failed {
			ts.Rounds = append(ts.Rounds, tr)
		}
	}
	return ts, nil
}

// ObserveFields implements crawlkeeper.Monitor: counts are HINCRBY in one
// pipeline; filled observations of fields that still need samples go
// through a script per field.
func (m *Monitor) ObserveFields(ctx context.Context, obs []crawlkeeper.FieldObservation) error {
	if len(obs) == 0 {
		return nil
	}
	type sf struct{ source, field string }
	type fill struct {
		target string
		rid    int64
	}
	counts := map[sf]map[string]int64{}
	fills := map[sf][]fill{}
	var order []sf
	var targets []string
	for _, o := range obs {
		for _, f := range o.Fields {
			k := sf{o.Source, f.Name}
			c := counts[k]
			if c == nil {
				c = map[string]int64{}
				counts[k] = c
				order = append(order, k)
			}
			c["present"]++
			if o.Round != "" {
				c["r:"+o.Round+":present"]++
			}
			if f.Filled {
				c["filled"]++
				if o.Round != "" {
					c["r:"+o.Round+":filled"]++
				}
				t := o.Target
				if crawlkeeper.ValidateTarget(t) != nil {
					t = ""
				}
				fills[k] = append(fills[k], fill{t, o.RecordID})
				if t != "" {
					targets = append(targets, t)
				}
			}
		}
	}
	// Fields that are already enough need no target ids or samples.
	pipe := m.c.Pipeline()
	enough := map[sf]*goredis.StringCmd{}
	for k := range fills {
		enough[k] = pipe.HGet(ctx, m.fieldKey(k.source, k.field), "enough")
	}
	// Missing hashes answer redis.Nil, which is "not enough".
	if _, err := pipe.Exec(ctx); err != nil && !errors.Is(err, goredis.Nil) {
		return fail("observe fields", err)
	}
	var need []string
	for k, cmd := range enough {
		if cmd.Val() == "1" {
			delete(fills, k)
			continue
		}
		for _, f := range fills[k] {
			if f.target != "" {
				need = append(need, f.target)
			}
		}
	}
	ids, _, err := m.ids(ctx, distinct(need))
	if err != nil {
		return err
	}
	pipe = m.c.Pipeline()
	for _, k := range order {
		fk := m.fieldKey(k.source, k.field)
		pipe.SAdd(ctx, m.key("sources"), k.source)
		pipe.SAdd(ctx, m.key("fields", k.source), k.field)
		for name, n := range counts[k] {
			pipe.HIncrBy(ctx, fk, name, n)
		}
		if fs := fills[k]; len(fs) > 0 {
			args := []any{fk, m.opts.Samples}
			for _, f := range fs {
				var tid int64
				if f.target != "" {
					tid = int64(ids[f.target]) + 1
				}
				args = append(args, tid, f.rid)
			}
			observeFilled.Eval(ctx, pipe, nil, args...)
		}
	}
	if _, err := pipe.Exec(ctx); err != nil {
		return fail("observe fields", err)
	}
	return nil
}

// Fields implements crawlkeeper.Monitor.
func (m *Monitor) Fields(ctx context.Context, source string) ([]crawlkeeper.FieldReport, error) {
	sources := []string{source}
	if source == "" {
		var err error
		if sources, err = m.c.SMembers(ctx, m.key("sources")).Result(); err != nil {
			return nil, fail("list sources", err)
		}
	}
	var stats []crawlkeeper.FieldStats
	for _, src := range sources {
		fields, err := m.c.SMembers(ctx, m.key("fields", src)).Result()
		if err != nil {
			return nil, fail("list fields", err)
		}
		for _, f := range fields {
			fk := m.fieldKey(src, f)
			pipe := m.c.Pipeline()
			h := pipe.HGetAll(ctx, fk)
			samples := pipe.LRange(ctx, fk+":samples", 0, -1)
			nt := pipe.BitCount(ctx, fk+":targets", nil)
			if _, err := pipe.Exec(ctx); err != nil {
				return nil, fail("read field", err)
			}
			hv := h.Val()
			st := crawlkeeper.FieldStats{Source: src, Field: f, Samples: []int64{}, ByRound: map[string][2]int64{}}
			var perr error
			num := func(field, s string) int64 {
				n, err := count(fk, field, s)
				if perr == nil {
					perr = err
				}
				return n
			}
			st.Present = num("present", hv["present"])
			st.Filled = num("filled", hv["filled"])
			st.Enough = hv["enough"] == "1"
			if st.Enough {
				st.Targets = num("targets", hv["targets"])
			} else {
				st.Targets = nt.Val()
			}
			for _, s := range samples.Val() {
				st.Samples = append(st.Samples, num("sample", s))
			}
			for k, v := range hv {
				if !strings.HasPrefix(k, "r:") {
					continue
				}
				i := strings.LastIndexByte(k, ':')
				round, what := k[2:i], k[i+1:]
				n := num(k, v)
				c := st.ByRound[round]
				if what == "present" {
					c[0] = n
				} else {
					c[1] = n
				}
				st.ByRound[round] = c
			}
			if perr != nil {
				return nil, perr
			}
			stats = append(stats, st)
		}
	}
	return crawlkeeper.FieldReports(stats, source, m.opts), nil
}
