package sqlstore

import (
	"context"
	"database/sql"
	"encoding/binary"
	"fmt"
	"math"
	"runtime"
	"sync"
	"time"

	"github.com/crawlkeeper/crawlkeeper"
	"github.com/crawlkeeper/crawlkeeper/recrawl"
)

var _ crawlkeeper.RecrawlStore = (*Store)(nil)

// RecrawlPacker is an engine whose index on (source, last_updated_at, ...)
// carries the record's id and the advisor's columns packed into one value
// (SQLite: a blob, see its migration 021), so that reading a source's
// counters reads one column per record instead of eight: the read is the
// advisor's whole cost.
type RecrawlPacker interface {
	// RecrawlPack returns the SQL expression of the packed value, exactly
	// as the index defines it (the planner matches the expression), which
	// evaluates to RecrawlPackSize bytes: the eight integers of
	// decodeRecrawlPack, big-endian.
	RecrawlPack() string
	// RecrawlReader returns a reader for one range of the packed read
	// and a function that gives it back. The read touches each page of
	// the range once, so SQLite's reader is one whose page cache is small:
	// every page a larger cache holds is memory the process takes fresh
	// from the system, at a page fault each.
	RecrawlReader(ctx context.Context) (Querier, func(), error)
}

// RecrawlPackSize is the length of a packed value.
const RecrawlPackSize = 8 * 8

// recrawlNoEvent and recrawlNoCounts stand for NULL in a packed value:
// no event date, counters not kept.
const (
	recrawlNoEvent  = math.MinInt64
	recrawlNoCounts = -1
)

// decodeRecrawlPack reads a packed value of RecrawlPackSize bytes: id,
// last_updated_at, event_at, fetch_refetches, fetch_changes,
// fetch_changed_us, fetch_unchanged_us and fetch_changed_log in
// millionths, NULLs as above. It returns the event date apart (EventAt
// nil), for the caller to place.
func decodeRecrawlPack(b []byte) (id int64, st recrawl.FetchStats, event *time.Time) {
	var v [7]int64
	id = int64(binary.BigEndian.Uint64(b))
	for i := range v {
		v[i] = int64(binary.BigEndian.Uint64(b[8+8*i:]))
	}
	// As crawlkeeper.RecrawlStats builds it, without a FetchCounts on the
	// heap per record.
	st = recrawl.FetchStats{LastFetch: crawlkeeper.MicrosTime(v[0])}
	if v[2] != recrawlNoCounts {
		st.Known, st.Refetches, st.Changes = true, v[2], v[3]
		st.ChangedSeconds, st.UnchangedSeconds = float64(v[4])/1e6, float64(v[5])/1e6
		st.ChangedLogSeconds = float64(v[6]) / 1e6
	}
	if v[1] == recrawlNoEvent {
		return id, st, nil
	}
	t := crawlkeeper.MicrosTime(v[1])
	return id, st, &t
}

// RecrawlRecords implements crawlkeeper.RecrawlStore: one query over the
// source's active records, through the packed index where the engine has
// one, of the columns the advisor ranks on: a record's last delivery,
// event date and delivery counters.
func (s *Store) RecrawlRecords(ctx context.Context, source string) ([]recrawl.Record, error) {
	var out []recrawl.Record
	var err error
	if p, ok := s.e.(RecrawlPacker); ok {
		out, err = s.recrawlPacked(ctx, p, source)
	} else {
		err = EachRow(ctx, s.e.Reader(), func(rows Rows) error {
			var (
				id, updated int64
				eventAt     sql.NullInt64
				f           [4]sql.NullInt64
				changedLog  sql.NullFloat64
			)
			if err := rows.Scan(&id, &updated, &eventAt, &f[0], &f[1], &f[2], &f[3], &changedLog); err != nil {
				return err
			}
			out = append(out, recrawl.Record{ID: id, Stats: crawlkeeper.RecrawlStats(crawlkeeper.MicrosTime(updated), NullTime(eventAt), fetchCounts(&f, changedLog))})
			return nil
		}, `SELECT id, last_updated_at, event_at, `+fetchCols+` FROM active WHERE source = ?`, source)
	}
	if err != nil {
		return nil, s.e.Wrap("read the recrawl counters", err)
	}
	return out, nil
}

// packedRow is one row of the packed read, as it came.
type packedRow [RecrawlPackSize]byte

// packedBlock is how many rows the packed read keeps in one allocation:
// blocks of a fixed size are never copied to grow, nor left half used.
const packedBlock = 4096

// recrawlParts bounds how many ranges of last_updated_at the packed read
// runs at once, each on a connection of its own.
const recrawlParts = 4

// recrawlPacked reads a source's counters from the packed index: in
// GOMAXPROCS ranges of last_updated_at at once (the reading, in the
// engine, is the whole cost, and each range is a range of the index), each
// on a reader of the engine's choice, copying each row's value as it comes
// (one RawBytes column: no allocation and no conversion per row) into
// blocks of packedBlock rows, then decoding everything into one slice,
// with the event dates in one more: a source of 100,000 records makes a
// few dozen allocations.
func (s *Store) recrawlPacked(ctx context.Context, p RecrawlPacker, source string) ([]recrawl.Record, error) {
	r := s.e.Reader()
	var lo, hi sql.NullInt64
	if err := r.QueryRow(ctx, `SELECT min(last_updated_at) FROM active WHERE source = ?`, source).Scan(&lo); err != nil {
		return nil, err
	}
	if !lo.Valid {
		return nil, nil
	}
	if err := r.QueryRow(ctx, `SELECT max(last_updated_at) FROM active WHERE source = ?`, source).Scan(&hi); err != nil {
		return nil, err
	}
	parts := int64(min(runtime.GOMAXPROCS(0), recrawlParts))
	if hi.Int64-lo.Int64 < parts {
		parts = 1
	}
	blocks := make([][][]packedRow, parts)
	errs := make([]error, parts)
	var wg sync.WaitGroup
	for k := range parts {
		from := lo.Int64 + (hi.Int64-lo.Int64)/parts*k
		to := lo.Int64 + (hi.Int64-lo.Int64)/parts*(k+1)
		cond := `last_updated_at >= ? AND last_updated_at < ?`
		if k == parts-1 {
			to, cond = hi.Int64, `last_updated_at >= ? AND last_updated_at <= ?`
		}
		wg.Go(func() {
			q, release, err := p.RecrawlReader(ctx)
			if err != nil {
				errs[k] = err
				return
			}
			defer release()
			var block []packedRow
			errs[k] = EachRow(ctx, q, func(rs Rows) error {
				var raw sql.RawBytes
				if err := rs.Scan(&raw); err != nil {
					return err
				}
				if len(raw) != RecrawlPackSize {
					return fmt.Errorf("packed recrawl counters of %d bytes, want %d", len(raw), RecrawlPackSize)
				}
				if len(block) == cap(block) {
					block = make([]packedRow, 0, packedBlock)
					blocks[k] = append(blocks[k], block)
				}
				block = append(block, packedRow(raw))
				blocks[k][len(blocks[k])-1] = block
				return nil
			}, `SELECT `+p.RecrawlPack()+` FROM active WHERE source = ? AND `+cond, source, from, to)
		})
	}
	wg.Wait()
	n := 0
	for k := range blocks {
		if errs[k] != nil {
			return nil, errs[k]
		}
		for _, b := range blocks[k] {
			n += len(b)
		}
	}
	// Decoded on one goroutine: decoding the parts in parallel was slower,
	// as their page faults on the fresh slice contend.
	out := make([]recrawl.Record, 0, n)
	events := make([]time.Time, 0, n)
	for _, part := range blocks {
		for _, b := range part {
			for i := range b {
				id, st, event := decodeRecrawlPack(b[i][:])
				if event != nil {
					events = append(events, *event)
					st.EventAt = &events[len(events)-1]
				}
				out = append(out, recrawl.Record{ID: id, Stats: st})
			}
		}
	}
	return out, nil
}

// RecrawlNames implements crawlkeeper.RecrawlStore, one query per chunk of
// ids. The ids are looked up by primary key and the source checked here:
// a condition on the source would lead planners to the per-source index
// and a walk of the whole source.
func (s *Store) RecrawlNames(ctx context.Context, source string, ids []int64) ([]crawlkeeper.RecrawlName, error) {
	var out []crawlkeeper.RecrawlName
	scan := func(rows Rows) error {
		var n crawlkeeper.RecrawlName
		var src string
		if err := rows.Scan(&n.ID, &src, &n.URL, &n.Target); err != nil {
			return err
		}
		if src == source {
			out = append(out, n)
		}
		return nil
	}
	var err error
	if ids == nil {
		err = EachRow(ctx, s.e.Reader(), scan, `SELECT id, source, url, last_target FROM active WHERE source = ?`, source)
	} else {
		err = Chunks(ids, func(c []int64) error {
			return EachRow(ctx, s.e.Reader(), scan, `SELECT id, source, url, last_target FROM active WHERE id IN (`+In(len(c))+`)`, Args(c)...)
		})
	}
	if err != nil {
		return nil, s.e.Wrap("read the names of records", err)
	}
	return out, nil
}

// fetchCounts builds a record's FetchCounts from its nullable columns: nil
// when they were never set (a record stored before they were kept). The
// columns are read into sql.Null values, which database/sql and pgx fill
// without an allocation per column and row.
func fetchCounts(f *[4]sql.NullInt64, changedLog sql.NullFloat64) *crawlkeeper.FetchCounts {
	if !f[0].Valid || !f[1].Valid || !f[2].Valid || !f[3].Valid {
		return nil
	}
	return &crawlkeeper.FetchCounts{Refetches: f[0].Int64, Changes: f[1].Int64, ChangedUS: f[2].Int64, UnchangedUS: f[3].Int64,
		ChangedLog: changedLog.Float64}
}
