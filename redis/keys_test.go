package redis_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/crawlkeeper/crawlkeeper"
	"github.com/crawlkeeper/crawlkeeper/redis"
	goredis "github.com/redis/go-redis/v9"
)

func openAt(t *testing.T, u string) *redis.Monitor {
	t.Helper()
	m, err := redis.Open(context.Background(), u, crawlkeeper.MonitorOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	return m
}

func fieldsOf(t *testing.T, m *redis.Monitor, source string) map[string]crawlkeeper.FieldReport {
	t.Helper()
	reps, err := m.Fields(context.Background(), source)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]crawlkeeper.FieldReport{}
	for _, r := range reps {
		out[r.Source+"|"+r.Field] = r
	}
	return out
}

// Source and field names containing ':' used to be joined into key names
// as they were, so ("a:b", "c") and ("a", "b:c") shared one key and each
// counted the other's observations.
func TestKeysOfDifferentNamesNeverMeet(t *testing.T) {
	ctx := context.Background()
	m := openAt(t, MustPrefixURL(t))
	// Both fields are rare (filled in under 20% of items), so both are
	// reported: 1 of 10 for ("a:b", "c"), 0 of 3 for ("a", "b:c").
	var obs []crawlkeeper.FieldObservation
	for i := 0; i < 10; i++ {
		obs = append(obs, crawlkeeper.FieldObservation{Source: "a:b", RecordID: int64(i + 1), Fields: []crawlkeeper.FieldFill{{Name: "c", Filled: i == 0}}})
	}
	for i := 0; i < 3; i++ {
		obs = append(obs, crawlkeeper.FieldObservation{Source: "a", RecordID: int64(i + 20), Fields: []crawlkeeper.FieldFill{{Name: "b:c", Filled: false}}})
	}
	if err := m.ObserveFields(ctx, obs); err != nil {
		t.Fatal(err)
	}
	all := fieldsOf(t, m, "")
	if r := all["a:b|c"]; r.Present != 10 || r.Filled != 1 {
		t.Fatalf("a:b/c = %+v, want 10 present, 1 filled", r)
	}
	if r := all["a|b:c"]; r.Present != 3 || r.Filled != 0 {
		t.Fatalf("a/b:c = %+v, want 3 present, none filled", r)
	}
	keys, err := m.Client().Keys(ctx, "*field:a%3Ab:c").Result()
	if err != nil || len(keys) != 1 {
		t.Fatalf("escaped field key of a:b/c: %v %v", keys, err)
	}
}

// Keys written by the first layout are renamed on open, and their data
// reads back under the escaped names.
func TestOldLayoutIsMigrated(t *testing.T) {
	ctx := context.Background()
	u := MustPrefixURL(t)
	m := openAt(t, u)
	c := m.Client()
	prefix := strings.TrimSuffix(m.Prefix(), ":")
	old := func(parts ...string) string { return prefix + ":" + strings.Join(parts, ":") }
	// A round named "r:1" with one queued and done target, and a field
	// "x:y" of source "s:1", written as the first layout did.
	created := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).UnixMicro()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	// The first layout's dictionary: two plain hashes and the counter.
	must(c.HSet(ctx, old("targets"), "t0", 0, "t1", 1).Err())
	must(c.HSet(ctx, old("target_names"), 0, "t0", 1, "t1").Err())
	must(c.Set(ctx, old("target_next"), 2, 0).Err())
	must(c.ZAdd(ctx, old("rounds"), goredis.Z{Score: float64(created), Member: "r:1"}).Err())
	must(c.HSet(ctx, old("round", "r:1", "meta"), "bucket", 600, "created", created).Err())
	must(c.SetBit(ctx, old("round", "r:1", "queued"), 1, 1).Err())
	must(c.SetBit(ctx, old("round", "r:1", "done"), 1, 1).Err())
	must(c.SAdd(ctx, old("sources"), "s:1").Err())
	must(c.SAdd(ctx, old("fields", "s:1"), "x:y").Err())
	must(c.HSet(ctx, old("field", "s:1", "x:y"), "present", 5, "filled", 0).Err())
	must(c.Del(ctx, old("layout")).Err())

	m2 := openAt(t, u)
	st, err := m2.Status(ctx, "r:1")
	if err != nil {
		t.Fatalf("status of a migrated round: %v", err)
	}
	if st.Queued != 1 || st.Done != 1 {
		t.Fatalf("migrated round = %+v", st)
	}
	if r := fieldsOf(t, m2, "s:1")["s:1|x:y"]; r.Present != 5 || r.Filled != 0 {
		t.Fatalf("migrated field = %+v", r)
	}
	if n, _ := c.Exists(ctx, old("round", "r:1", "meta"), old("field", "s:1", "x:y"), old("targets"), old("target_names")).Result(); n != 0 {
		t.Fatalf("%d keys left under the old names", n)
	}
	if rem, err := m2.Remaining(ctx, "r:1", "", 0); err != nil || len(rem) != 0 {
		t.Fatalf("remaining of the migrated round = %v %v", rem, err)
	}
	if ts, err := m2.Target(ctx, "t1"); err != nil || ts.ID != 1 || len(ts.Rounds) != 1 || !ts.Rounds[0].Done {
		t.Fatalf("t1 after the migration = %+v %v", ts, err)
	}
}

// A counter that is not a number is reported, not read as zero.
func TestDamagedCounterIsAnError(t *testing.T) {
	ctx := context.Background()
	m := openAt(t, MustPrefixURL(t))
	if err := m.ObserveFields(ctx, []crawlkeeper.FieldObservation{{Source: "s", RecordID: 1, Fields: []crawlkeeper.FieldFill{{Name: "f", Filled: false}}}}); err != nil {
		t.Fatal(err)
	}
	if err := m.Client().HSet(ctx, m.Prefix()+"field:s:f", "present", "lots").Err(); err != nil {
		t.Fatal(err)
	}
	if _, err := m.Fields(ctx, "s"); err == nil || !strings.Contains(err.Error(), "not a number") {
		t.Fatalf("fields over a damaged counter = %v, want an error naming it", err)
	}
}

// Clear deletes the keys under its own prefix and no other, even when the
// prefix holds glob characters.
func TestClearDeletesOnlyItsPrefix(t *testing.T) {
	ctx := context.Background()
	base := MustPrefixURL(t)
	mine := openAt(t, strings.Replace(base, "prefix=", "prefix=%5Bx%5D%2A", 1))
	other := openAt(t, strings.Replace(base, "prefix=", "prefix=%5Bx%5Dz", 1))
	for _, m := range []*redis.Monitor{mine, other} {
		if _, err := m.Queue(ctx, crawlkeeper.QueueRequest{Round: "1", Targets: []string{"a", "b"}, At: time.Unix(1e9, 0)}); err != nil {
			t.Fatal(err)
		}
	}
	count := func(pattern string) int {
		keys, err := mine.Client().Keys(ctx, pattern).Result()
		if err != nil {
			t.Fatal(err)
		}
		return len(keys)
	}
	if count(`\[x\]\**`) == 0 || count(`\[x\]z*`) == 0 {
		t.Fatal("queueing wrote no keys")
	}
	if err := mine.Clear(ctx); err != nil {
		t.Fatal(err)
	}
	if n := count(`\[x\]\**`); n != 0 {
		t.Errorf("%d keys left under the cleared prefix", n)
	}
	if count(`\[x\]z*`) == 0 {
		t.Error("Clear deleted another prefix's keys")
	}
	if err := other.Clear(ctx); err != nil {
		t.Fatal(err)
	}
}
