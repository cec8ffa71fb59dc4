package rawbench

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/RoaringBitmap/roaring/v2"
	"github.com/crawlkeeper/crawlkeeper"
	"github.com/crawlkeeper/crawlkeeper/bench"
	"github.com/crawlkeeper/crawlkeeper/mysql"
	"github.com/crawlkeeper/crawlkeeper/postgres"
	"github.com/crawlkeeper/crawlkeeper/sqlite"
	"github.com/redis/go-redis/v9"
)

// EmbeddedMarks is monitor_mark's baseline for the embedded monitor: the
// libraries it is built on doing the same work by hand. A map gives each
// target name its id, a roaring bitmap holds the done set, and each batch
// is persisted with one write (the batch's ids as a serialized bitmap)
// into the SQL store st (SQLite, PostgreSQL or MySQL), on its own
// connections and so with its durability.
func EmbeddedMarks(ctx context.Context, st crawlkeeper.Store) (bench.MarkBaseline, error) {
	m := &embeddedMarks{ids: map[string]uint32{}, done: roaring.New()}
	var ddl string
	switch s := st.(type) {
	case *sqlite.Store:
		ddl = `CREATE TABLE bench_marks (seq INTEGER PRIMARY KEY, ids BLOB NOT NULL)`
		m.exec = func(ctx context.Context, q string, args ...any) error {
			_, err := s.DB().ExecContext(ctx, q, args...)
			return err
		}
	case *mysql.Store:
		ddl = `CREATE TABLE bench_marks (seq BIGINT AUTO_INCREMENT PRIMARY KEY, ids LONGBLOB NOT NULL)`
		m.exec = func(ctx context.Context, q string, args ...any) error {
			_, err := s.DB().ExecContext(ctx, q, args...)
			return err
		}
	case *postgres.Store:
		ddl = `CREATE TABLE bench_marks (seq bigserial PRIMARY KEY, ids bytea NOT NULL)`
		m.exec = func(ctx context.Context, q string, args ...any) error {
			_, err := s.Pool().Exec(ctx, strings.Replace(q, "?", "$1", 1), args...)
			return err
		}
	default:
		return nil, crawlkeeper.Errorf(crawlkeeper.ENOTSUPPORTED, "the embedded mark baseline needs a SQL store, not %T", st)
	}
	if err := m.exec(ctx, ddl); err != nil {
		return nil, err
	}
	return m, nil
}

type embeddedMarks struct {
	exec func(ctx context.Context, q string, args ...any) error
	ids  map[string]uint32
	done *roaring.Bitmap
}

func (m *embeddedMarks) Queue(_ context.Context, names []string) error {
	for _, n := range names {
		if _, ok := m.ids[n]; !ok {
			m.ids[n] = uint32(len(m.ids))
		}
	}
	return nil
}

func (m *embeddedMarks) Mark(ctx context.Context, names []string) error {
	batch := roaring.New()
	for _, n := range names {
		id, ok := m.ids[n]
		if !ok {
			return fmt.Errorf("mark baseline: %q was not queued", n)
		}
		batch.Add(id)
	}
	m.done.Or(batch)
	b, err := batch.ToBytes()
	if err != nil {
		return err
	}
	return m.exec(ctx, `INSERT INTO bench_marks (ids) VALUES (?)`, b)
}

func (m *embeddedMarks) Close() {}

// RedisMarks is monitor_mark's baseline for the Redis monitor: a hash maps
// each target name to its id, and a batch of marks is one pipeline of
// HGETs followed by one pipeline of SETBITs on the done bitmap.
func RedisMarks(ctx context.Context, url string) (bench.MarkBaseline, error) {
	opt, err := redis.ParseURL(url)
	if err != nil {
		return nil, err
	}
	c := redis.NewClient(opt)
	m := &redisMarks{c: c, ids: "crawlkeeper-bench-raw:ids", done: "crawlkeeper-bench-raw:done"}
	if err := c.Del(ctx, m.ids, m.done).Err(); err != nil {
		c.Close()
		return nil, err
	}
	return m, nil
}

type redisMarks struct {
	c         *redis.Client
	ids, done string
	n         int
}

func (m *redisMarks) Queue(ctx context.Context, names []string) error {
	return batches(names, 10_000, func(c []string) error {
		args := make([]any, 0, 2*len(c))
		for _, n := range c {
			args = append(args, n, m.n)
			m.n++
		}
		return m.c.HSet(ctx, m.ids, args...).Err()
	})
}

func (m *redisMarks) Mark(ctx context.Context, names []string) error {
	p := m.c.Pipeline()
	gets := make([]*redis.StringCmd, len(names))
	for i, n := range names {
		gets[i] = p.HGet(ctx, m.ids, n)
	}
	if _, err := p.Exec(ctx); err != nil {
		return err
	}
	p = m.c.Pipeline()
	for _, g := range gets {
		id, err := strconv.ParseInt(g.Val(), 10, 64)
		if err != nil {
			return fmt.Errorf("mark baseline: id %q: %w", g.Val(), err)
		}
		p.SetBit(ctx, m.done, id, 1)
	}
	_, err := p.Exec(ctx)
	return err
}

func (m *redisMarks) Close() {
	m.c.Del(context.Background(), m.ids, m.done)
	m.c.Close()
}
