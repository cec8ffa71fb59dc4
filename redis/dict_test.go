package redis_test

import (
	"context"
	"crypto/sha1"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/crawlkeeper/crawlkeeper"
	"github.com/crawlkeeper/crawlkeeper/redis"
)

// dictNames returns n distinct target names: company names in Chinese and
// English, every 97th longer than 64 bytes (the default
// hash-max-listpack-value).
func dictNames(n int) []string {
	zh := []string{"北京", "上海", "深圳", "杭州", "成都"}
	out := make([]string, n)
	for i := range out {
		switch {
		case i%97 == 0:
			out[i] = fmt.Sprintf("%s市第%d建筑工程有限公司%s分公司第三项目部", zh[i%5], i, zh[(i+1)%5])
		case i%2 == 0:
			out[i] = fmt.Sprintf("%s%d科技有限公司", zh[i%5], i)
		default:
			out[i] = fmt.Sprintf("Company %d Holdings Ltd.", i)
		}
	}
	return out
}

// encodings counts the encodings (OBJECT ENCODING) of the dictionary's
// bucket keys.
func encodings(t *testing.T, m *redis.Monitor) map[string]int {
	t.Helper()
	ctx := context.Background()
	out := map[string]int{}
	for _, pattern := range []string{"dict:i:*", "dict:n:*"} {
		keys, err := m.Client().Keys(ctx, m.Prefix()+pattern).Result()
		if err != nil {
			t.Fatal(err)
		}
		for _, k := range keys {
			enc, err := m.Client().ObjectEncoding(ctx, k).Result()
			if err != nil {
				t.Fatal(err)
			}
			out[pattern+" "+enc]++
		}
	}
	return out
}

// The dictionary's hashes stay listpacks as it grows, long names included,
// and every name keeps its id.
func TestDictionaryBuckets(t *testing.T) {
	ctx := context.Background()
	u := MustPrefixURL(t)
	m := openAt(t, u)
	names := dictNames(6000)
	for i := 0; i < len(names); i += 1000 {
		res, err := m.Queue(ctx, crawlkeeper.QueueRequest{Round: "1", Targets: names[i : i+1000], At: time.Unix(1e9, 0)})
		if err != nil || res.NewTargets != 1000 {
			t.Fatalf("queue: %+v %v", res, err)
		}
	}
	enc := encodings(t, m)
	if enc["dict:i:* hashtable"]+enc["dict:n:* hashtable"] != 0 || enc["dict:i:* listpack"] != 6000/128+1 || enc["dict:n:* listpack"] < 6000/80 {
		t.Fatalf("bucket encodings = %v", enc)
	}
	long, err := m.Client().HLen(ctx, m.Prefix()+"dict:long").Result()
	if err != nil || long != int64((6000+96)/97) {
		t.Fatalf("long names = %d, %v", long, err)
	}
	// A fresh handle (no cache) finds every id, and pages by name.
	other := openAt(t, u)
	for i, n := range names {
		if i%7 != 0 {
			continue
		}
		ts, err := other.Target(ctx, n)
		if err != nil || ts.ID != uint32(i) {
			t.Fatalf("target %q = %+v, %v; want id %d", n, ts, err, i)
		}
	}
	rem, err := other.Remaining(ctx, "1", names[95], 5)
	if err != nil || strings.Join(rem, "|") != strings.Join(names[96:101], "|") {
		t.Fatalf("remaining after %q = %q, %v", names[95], rem, err)
	}
}

// digest is the dictionary's digest of a name (see redis/dict.go): bits
// 48 to 71 of its SHA-1, modulo 2^23.
func digest(name string) uint32 {
	s := sha1.Sum([]byte(name))
	return (uint32(s[6])<<16 | uint32(s[7])<<8 | uint32(s[8])) & (1<<23 - 1)
}

// Two names with the same digest in the same bucket both keep their own
// ids, before and after the buckets split.
func TestDictionaryDigestCollision(t *testing.T) {
	ctx := context.Background()
	seen := map[uint32]string{}
	var a, b string
	for i := 0; a == ""; i++ {
		n := "collide-" + strconv.Itoa(i)
		d := digest(n)
		if o, ok := seen[d]; ok {
			a, b = o, n
		}
		seen[d] = n
	}
	u := MustPrefixURL(t)
	m := openAt(t, u)
	// A fresh dictionary has one bucket, so the two share it.
	if _, err := m.Queue(ctx, crawlkeeper.QueueRequest{Round: "1", Targets: []string{a, b}}); err != nil {
		t.Fatal(err)
	}
	collide, err := m.Client().HGetAll(ctx, m.Prefix()+"dict:collide").Result()
	if err != nil || len(collide) != 1 || collide[b] != "1" {
		t.Fatalf("collide hash = %v, %v; want %s → 1", collide, err, b)
	}
	check := func(when string) {
		t.Helper()
		fresh := openAt(t, u)
		for id, n := range []string{a, b} {
			ts, err := fresh.Target(ctx, n)
			if err != nil || ts.ID != uint32(id) {
				t.Fatalf("%s: %s = %+v, %v; want id %d", when, n, ts, err, id)
			}
		}
		res, err := fresh.Queue(ctx, crawlkeeper.QueueRequest{Round: "2", Targets: []string{a, b}})
		if err != nil || res.NewTargets != 0 {
			t.Fatalf("%s: queueing them again: %+v %v", when, res, err)
		}
	}
	check("in one bucket")
	// Enough names to split the buckets many times over.
	if _, err := m.Queue(ctx, crawlkeeper.QueueRequest{Round: "1", Targets: dictNames(3000)}); err != nil {
		t.Fatal(err)
	}
	check("after the splits")
}

// A dictionary in the first layout (two plain hashes) moves into buckets
// when a monitor opens it; a migration stopped midway, as by a killed
// process, resumes on the next open and ends with every name at its id.
func TestDictionaryMigrationResumes(t *testing.T) {
	ctx := context.Background()
	u := MustPrefixURL(t)
	seed := openAt(t, u)
	c := seed.Client()
	p := seed.Prefix()
	names := dictNames(12345)
	// The layout-2 keys: the dictionary as two hashes, a round using it.
	for i := 0; i < len(names); i += 1000 {
		args := []any{}
		rev := []any{}
		for j := i; j < min(i+1000, len(names)); j++ {
			args = append(args, names[j], j)
			rev = append(rev, j, names[j])
		}
		if err := c.HSet(ctx, p+"targets", args...).Err(); err != nil {
			t.Fatal(err)
		}
		if err := c.HSet(ctx, p+"target_names", rev...).Err(); err != nil {
			t.Fatal(err)
		}
	}
	for _, k := range []string{"dict:nb", "dict:long", "dict:collide"} {
		c.Del(ctx, p+k)
	}
	keys, _ := c.Keys(ctx, p+"dict:*").Result()
	if len(keys) > 0 {
		c.Del(ctx, keys...)
	}
	c.Set(ctx, p+"target_next", len(names), 0)
	c.Set(ctx, p+"layout", 2, 0)
	// A round with ids 3 and 12000 queued.
	if _, err := seed.Queue(ctx, crawlkeeper.QueueRequest{Round: "r", At: time.Unix(1e9, 0)}); err != nil {
		t.Fatal(err)
	}
	c.SetBit(ctx, p+"round:r:queued", 3, 1)
	c.SetBit(ctx, p+"round:r:queued", 12000, 1)

	stop := errors.New("killed")
	redis.SetMigrateStep(func(next int64) error {
		if next >= 10000 {
			return stop
		}
		return nil
	})
	defer redis.SetMigrateStep(nil)
	if _, err := redis.Open(ctx, u, crawlkeeper.MonitorOptions{}); !errors.Is(err, stop) {
		t.Fatalf("open with the migration stopped = %v", err)
	}
	if got, _ := c.Get(ctx, p+"dict:migrated").Int(); got != 10000 {
		t.Fatalf("migrated up to %d, want 10000", got)
	}
	if v, _ := c.Get(ctx, p+"layout").Int(); v != 2 {
		t.Fatalf("layout %d after a stopped migration", v)
	}
	redis.SetMigrateStep(nil)
	m := openAt(t, u)
	if v, _ := c.Get(ctx, p+"layout").Int(); v != 3 {
		t.Fatalf("layout %d after the migration", v)
	}
	if n, _ := c.Exists(ctx, p+"targets", p+"target_names", p+"dict:migrated").Result(); n != 0 {
		t.Fatalf("%d keys of the old dictionary left", n)
	}
	for i, n := range names {
		ts, err := m.Target(ctx, n)
		if err != nil || ts.ID != uint32(i) {
			t.Fatalf("target %q = %+v, %v; want id %d", n, ts, err, i)
		}
	}
	if rem, err := m.Remaining(ctx, "r", "", 0); err != nil || len(rem) != 2 || rem[0] != names[3] || rem[1] != names[12000] {
		t.Fatalf("remaining = %q, %v", rem, err)
	}
	res, err := m.Queue(ctx, crawlkeeper.QueueRequest{Round: "r", Targets: []string{names[5], "new name"}})
	if err != nil || res.NewTargets != 1 {
		t.Fatalf("queue after the migration: %+v %v", res, err)
	}
	if ts, err := m.Target(ctx, "new name"); err != nil || ts.ID != uint32(len(names)) {
		t.Fatalf("new name = %+v, %v", ts, err)
	}
	if enc := encodings(t, m); enc["dict:i:* hashtable"]+enc["dict:n:* hashtable"] != 0 {
		t.Fatalf("bucket encodings = %v", enc)
	}
}
