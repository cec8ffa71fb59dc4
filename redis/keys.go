package redis

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	goredis "github.com/redis/go-redis/v9"
)

// Key names join their parts with ':'. Round, source and field names may
// contain ':' themselves, so each variable part is escaped: '%' becomes
// "%25" and ':' becomes "%3A". Two different (source, field) pairs can
// then never share a key, and names without those characters — nearly all
// of them — read the same as before in redis-cli.
var keyEscaper = strings.NewReplacer("%", "%25", ":", "%3A")

// Prefix returns the prefix of every key of the monitor, with its ':'.
func (m *Monitor) Prefix() string { return m.prefix + ":" }

// escapePart escapes one variable part of a key name.
func escapePart(s string) string {
	if !strings.ContainsAny(s, "%:") {
		return s
	}
	return keyEscaper.Replace(s)
}

// layoutVersion is the key layout this package writes: 3 keeps the
// target dictionary in small bucketed hashes (see dict.go); 2 escapes the
// variable parts of key names; 1, the first, joined them as they were and
// kept the dictionary in two large hashes.
const layoutVersion = 3

// migrateLayout brings the keys of an earlier layout to this one, once
// per prefix (the layout key records it): it renames the keys that the
// first layout wrote for names containing ':' or '%' to their escaped
// names, then moves the dictionary into buckets (migrateDict), resumably.
// In the first layout two pairs such as ("a:b", "c") and ("a", "b:c")
// shared one key; their shared data moves to the first pair found, as
// nothing can tell them apart any more.
func (m *Monitor) migrateLayout(ctx context.Context) error {
	lk := m.prefix + ":layout"
	v, err := m.c.Get(ctx, lk).Int()
	switch {
	case errors.Is(err, goredis.Nil):
	case err != nil:
		return fmt.Errorf("read %s: %w (it holds the key layout version; delete it only to migrate again)", lk, err)
	case v >= layoutVersion:
		return nil
	case v >= 2:
		return m.finishLayout(ctx)
	}
	old := func(parts ...string) string { return m.prefix + ":" + strings.Join(parts, ":") }
	rename := func(from, to string) error {
		if from == to {
			return nil
		}
		if err := m.c.RenameNX(ctx, from, to).Err(); err != nil && !isNoSuchKey(err) {
			return fmt.Errorf("rename %s to %s: %w", from, to, err)
		}
		return nil
	}
	rounds, err := m.c.ZRange(ctx, m.key("rounds"), 0, -1).Result()
	if err != nil {
		return fmt.Errorf("list rounds: %w", err)
	}
	for _, r := range rounds {
		if escapePart(r) == r {
			continue
		}
		from, to := old("round", r)+":", m.roundPrefix(r)
		buckets := map[string]bool{}
		for _, k := range []string{"open", "kept"} {
			ss, err := m.c.ZRange(ctx, from+k, 0, -1).Result()
			if err != nil {
				return fmt.Errorf("list buckets of round %q: %w", r, err)
			}
			for _, s := range ss {
				buckets[s] = true
			}
		}
		for _, k := range []string{"meta", "queued", "done", "failed", "buckets", "open", "kept"} {
			if err := rename(from+k, to+k); err != nil {
				return err
			}
		}
		for s := range buckets {
			if err := rename(from+"bucket:"+s, to+"bucket:"+s); err != nil {
				return err
			}
		}
	}
	sources, err := m.c.SMembers(ctx, m.key("sources")).Result()
	if err != nil {
		return fmt.Errorf("list sources: %w", err)
	}
	for _, src := range sources {
		fields, err := m.c.SMembers(ctx, old("fields", src)).Result()
		if err != nil {
			return fmt.Errorf("list fields of %q: %w", src, err)
		}
		for _, f := range fields {
			from, to := old("field", src, f), m.fieldKey(src, f)
			for _, suffix := range []string{"", ":samples", ":targets"} {
				if err := rename(from+suffix, to+suffix); err != nil {
					return err
				}
			}
		}
		if err := rename(old("fields", src), m.key("fields", src)); err != nil {
			return err
		}
	}
	if err := m.c.Set(ctx, lk, 2, 0).Err(); err != nil {
		return err
	}
	return m.finishLayout(ctx)
}

// finishLayout moves a layout-2 dictionary into buckets and records
// layout 3.
func (m *Monitor) finishLayout(ctx context.Context) error {
	if err := m.migrateDict(ctx); err != nil {
		return err
	}
	if err := m.c.Set(ctx, m.prefix+":layout", layoutVersion, 0).Err(); err != nil {
		return err
	}
	return m.c.Del(ctx, m.key("dict", "migrated")).Err()
}

func isNoSuchKey(err error) bool {
	return err != nil && strings.Contains(err.Error(), "no such key")
}

// count parses a counter stored in a hash field; a missing field is 0.
// Anything else that is not a number means the data was damaged or written
// by something else, and is reported rather than read as 0.
func count(key, field, s string) (int64, error) {
	if s == "" {
		return 0, nil
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("redis: %s %s holds %q, not a number: the monitor's data is damaged (was the key written by another program?)", key, field, s)
	}
	return n, nil
}
