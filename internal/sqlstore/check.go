package sqlstore

import (
	"context"
	"fmt"

	"github.com/crawlkeeper/crawlkeeper"
	"github.com/crawlkeeper/crawlkeeper/internal/storeenc"
)

// probes returns the invariants Check verifies; each query returns (id,
// key, a, b) per violation for ViolationMessage.
func (s *Store) probes() []Probe {
	return []Probe{
		{Kind: "key_in_both", Query: "SELECT a.id, a.`key`, r.id, 0 FROM active a JOIN archive r ON r.`key` = a.`key`"},
		{Kind: "duplicate_id", Query: "SELECT a.id, a.`key`, 0, 0 FROM active a JOIN archive r ON r.id = a.id"},
		{Kind: "crawled_after_updated", Query: "SELECT id, `key`, crawled_at, last_updated_at FROM active WHERE crawled_at > last_updated_at " +
			"UNION ALL SELECT id, `key`, crawled_at, last_updated_at FROM archive WHERE crawled_at > last_updated_at"},
		// Kept versions must be a contiguous run that ends just before the
		// record's current version (older ones may have been trimmed).
		{Kind: "history_gap", Query: `SELECT record_id, '', v, hi - lo + 1 - n FROM (
			SELECT h.record_id, coalesce(a.version, r.version) AS v, max(h.version) AS hi, min(h.version) AS lo, count(*) AS n FROM history h
			LEFT JOIN active a ON a.id = h.record_id LEFT JOIN archive r ON r.id = h.record_id
			GROUP BY h.record_id, a.version, r.version) g
		WHERE v IS NOT NULL AND (n != hi - lo + 1 OR hi != v - 1)`},
		{Kind: "history_orphan", Query: `SELECT DISTINCT h.record_id, '', 0, 0 FROM history h
		WHERE NOT EXISTS (SELECT 1 FROM active a WHERE a.id = h.record_id) AND NOT EXISTS (SELECT 1 FROM archive r WHERE r.id = h.record_id)`},
		{Kind: "version_invalid", Query: "SELECT id, `key`, version, 0 FROM active WHERE version < 1 UNION ALL SELECT id, `key`, version, 0 FROM archive WHERE version < 1"},
		// The counts archive passes read must be what they count.
		{Kind: "date_error_count", Query: `SELECT 0, c.source, c.n, coalesce(a.n, 0) FROM
			(SELECT source, ` + s.e.SumInt("n") + ` AS n FROM date_error_counts GROUP BY source) c
			LEFT JOIN (SELECT source, count(*) AS n FROM active WHERE date_errors IS NOT NULL GROUP BY source) a ON a.source = c.source
			WHERE c.n <> coalesce(a.n, 0)
			UNION ALL SELECT 0, a.source, 0, count(*) FROM active a WHERE date_errors IS NOT NULL
			AND NOT EXISTS (SELECT 1 FROM date_error_counts c WHERE c.source = a.source) GROUP BY a.source`},
		{Kind: "id_counter", Query: `SELECT m, '', n, 0 FROM (SELECT ` + s.e.Greatest() + `(coalesce((SELECT max(id) FROM active), 0), coalesce((SELECT max(id) FROM archive), 0)) AS m,
		(` + s.e.NextIDQuery() + `) AS n) c WHERE m >= n`},
	}
}

// Check implements crawlkeeper.Store: the probes, then the full-text
// index's own checks (Searcher.CheckSearch).
func (s *Store) Check(ctx context.Context) (*crawlkeeper.CheckReport, error) {
	rep := &crawlkeeper.CheckReport{Violations: []crawlkeeper.Violation{}}
	add := func(v crawlkeeper.Violation) { rep.Violations = append(rep.Violations, v) }
	for _, p := range s.probes() {
		err := EachRow(ctx, s.e.Reader(), func(rows Rows) error {
			var id, a, b int64
			var key string
			err := rows.Scan(&id, &key, &a, &b)
			add(crawlkeeper.Violation{Kind: p.Kind, ID: id, Key: key, Message: storeenc.ViolationMessage(p.Kind, id, key, a, b)})
			return err
		}, p.Query+fmt.Sprintf(" LIMIT %d", storeenc.MaxViolations))
		if err != nil {
			return nil, s.e.Wrap("check "+p.Kind, err)
		}
	}
	if err := s.e.CheckSearch(ctx, add); err != nil {
		return nil, err
	}
	rep.OK = len(rep.Violations) == 0
	return rep, nil
}
