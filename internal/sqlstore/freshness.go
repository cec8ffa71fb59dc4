package sqlstore

import (
	"strconv"

	"github.com/crawlkeeper/crawlkeeper"
)

// FreshnessSQL returns the query that computes crawlkeeper.Freshness over
// the active table as crawlkeeper.FreshnessQuery defines it, and its
// arguments: count, never processed, due, oldest processed time.
//
// The covered spans become a balanced tree of CASE expressions on id, so
// each row costs a logarithmic number of comparisons however many spans a
// pass left; ids and times are integers written into the text, so the
// number of spans is bounded by neither placeholder limits nor statement
// caches. greatest names the engine's two-argument maximum (max on
// SQLite, GREATEST elsewhere); ph returns the n-th placeholder (from 1);
// chain is the chain as the engine stores it.
func FreshnessSQL(q crawlkeeper.FreshnessQuery, chain any, greatest string, ph func(n int) string) (string, []any) {
	processed := "processed_at"
	if len(q.Covered) > 0 {
		processed = `CASE WHEN processed_at IS NOT NULL AND processed_version <> 0
			THEN ` + greatest + `(processed_at, ` + boundTree(segments(q.Covered)) + `) ELSE processed_at END`
	}
	sql := `SELECT count(*),
			count(CASE WHEN processed_at IS NULL THEN 1 END),
			count(CASE WHEN processed_at IS NULL OR processed_version <> version OR processed_chain <> ` + ph(1) + ` OR p < ` + ph(2) + ` THEN 1 END),
			min(p)
		FROM (SELECT processed_at, processed_version, version, processed_chain, ` + processed + ` AS p FROM active) f`
	return sql, []any{chain, q.DueBefore.UnixMicro()}
}

// segment is a run of ids (after, through] whose bound is at (Unix
// microseconds, 0 where no span covers them).
type segment struct {
	through int64
	at      int64
}

// segments turns spans into consecutive segments from the lowest id to
// the highest: the last one (through 0) stands for every id above the
// spans, the first for every id up to the first span.
func segments(spans []crawlkeeper.CoveredSpan) []segment {
	var out []segment
	add := func(through, at int64) {
		n := len(out)
		switch {
		case n > 0 && out[n-1].at == at:
			out[n-1].through = through
		case n > 0 && out[n-1].through == through:
			// an empty gap between adjacent spans
		default:
			out = append(out, segment{through: through, at: at})
		}
	}
	for _, s := range spans {
		add(s.After, 0)
		add(s.Through, s.At.UnixMicro())
	}
	return append(out, segment{at: 0})
}

// boundTree is the CASE expression over id that yields the bound of the
// segment an id falls in: segs[i] covers ids above segs[i-1].through up
// to segs[i].through, the last one every id above.
func boundTree(segs []segment) string {
	if len(segs) == 1 {
		return strconv.FormatInt(segs[0].at, 10)
	}
	mid := (len(segs) - 1) / 2
	return "CASE WHEN id <= " + strconv.FormatInt(segs[mid].through, 10) + " THEN " + boundTree(segs[:mid+1]) +
		" ELSE " + boundTree(segs[mid+1:]) + " END"
}
