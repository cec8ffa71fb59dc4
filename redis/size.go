package redis

import (
	"context"
	"strings"

	"github.com/crawlkeeper/crawlkeeper"
	goredis "github.com/redis/go-redis/v9"
)

var _ crawlkeeper.MonitorSizer = (*Monitor)(nil)

// isDictKey reports whether key (under the monitor's prefix) belongs to
// the target dictionary.
func (m *Monitor) isDictKey(key string) bool {
	rest := strings.TrimPrefix(key, m.prefix+":")
	return rest == "targets" || rest == "target_names" || rest == "target_next" || strings.HasPrefix(rest, "dict:")
}

// MonitorSize implements crawlkeeper.MonitorSizer: the sum of MEMORY
// USAGE (SAMPLES 0, every element counted) over the keys under the
// monitor's prefix.
func (m *Monitor) MonitorSize(ctx context.Context) (*crawlkeeper.MonitorSize, error) {
	sz := &crawlkeeper.MonitorSize{}
	it := m.c.Scan(ctx, 0, escapeGlob(m.prefix)+":*", 1000).Iterator()
	var keys []string
	flush := func() error {
		pipe := m.c.Pipeline()
		cmds := make([]*goredis.IntCmd, len(keys))
		for i, k := range keys {
			cmds[i] = pipe.MemoryUsage(ctx, k, 0)
		}
		if _, err := pipe.Exec(ctx); err != nil && err != goredis.Nil {
			return fail("monitor size", err)
		}
		for i, c := range cmds {
			n := c.Val() // a key deleted meanwhile reads as 0
			if m.isDictKey(keys[i]) {
				sz.Dictionary += n
			}
			sz.Total += n
		}
		keys = keys[:0]
		return nil
	}
	for it.Next(ctx) {
		keys = append(keys, it.Val())
		if len(keys) == 1000 {
			if err := flush(); err != nil {
				return nil, err
			}
		}
	}
	if err := it.Err(); err != nil {
		return nil, fail("monitor size", err)
	}
	if err := flush(); err != nil {
		return nil, err
	}
	return sz, nil
}
