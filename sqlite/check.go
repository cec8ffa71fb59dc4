package sqlite

import (
	"context"
	"fmt"

	"github.com/crawlkeeper/crawlkeeper"
)

// maxViolations bounds each kind of violation listed by Check, so a badly
// broken store still gets a readable report.
const maxViolations = 1000

// Check implements crawlkeeper.Store.
func (s *Store) Check(ctx context.Context) (*crawlkeeper.CheckReport, error) {
	rep := &crawlkeeper.CheckReport{Violations: []crawlkeeper.Violation{}}
	add := func(v crawlkeeper.Violation) { rep.Violations = append(rep.Violations, v) }
	type probe struct {
		kind  string
		query string
		msg   func(id int64, key string, a, b int64) string
	}
	probes := []probe{
		{"key_in_both", `SELECT a.id, a.key, r.id, 0 FROM active a JOIN archive r ON r.key = a.key`,
			func(id int64, key string, a, _ int64) string {
				return fmt.Sprintf("key %s is active (id %d) and archived (id %d)", key, id, a)
			}},
		{"duplicate_id", `SELECT a.id, a.key, 0, 0 FROM active a JOIN archive r ON r.id = a.id`,
			func(id int64, _ string, _, _ int64) string {
				return fmt.Sprintf("id %d is both active and archived", id)
			}},
		{"crawled_after_updated", `SELECT id, key, crawled_at, last_updated_at FROM active WHERE crawled_at > last_updated_at UNION ALL SELECT id, key, crawled_at, last_updated_at FROM archive WHERE crawled_at > last_updated_at`,
			func(id int64, _ string, a, b int64) string {
				return fmt.Sprintf("record %d has crawled_at %s after last_updated_at %s", id, crawlkeeper.MicrosTime(a).Format("2006-01-02T15:04:05.999999Z07:00"), crawlkeeper.MicrosTime(b).Format("2006-01-02T15:04:05.999999Z07:00"))
			}},
		// Kept versions must be a contiguous run that ends just before the
		// record's current version (older ones may have been trimmed).
		{"history_gap", `SELECT h.record_id, '', coalesce(a.version, r.version), max(h.version) - min(h.version) + 1 - count(*) FROM history h
			LEFT JOIN active a ON a.id = h.record_id LEFT JOIN archive r ON r.id = h.record_id
			GROUP BY h.record_id HAVING coalesce(a.version, r.version) IS NOT NULL AND (count(*) != max(h.version) - min(h.version) + 1 OR max(h.version) != coalesce(a.version, r.version) - 1)`,
			func(id int64, _ string, v, gaps int64) string {
				return fmt.Sprintf("record %d (version %d) has history versions that are not contiguous up to version %d (%d missing)", id, v, v-1, gaps)
			}},
		{"history_orphan", `SELECT DISTINCT h.record_id, '', 0, 0 FROM history h WHERE NOT EXISTS (SELECT 1 FROM active a WHERE a.id = h.record_id) AND NOT EXISTS (SELECT 1 FROM archive r WHERE r.id = h.record_id)`,
			func(id int64, _ string, _, _ int64) string {
				return fmt.Sprintf("history of record %d exists but the record does not", id)
			}},
		{"version_invalid", `SELECT id, key, version, 0 FROM active WHERE version < 1 UNION ALL SELECT id, key, version, 0 FROM archive WHERE version < 1`,
			func(id int64, _ string, v, _ int64) string {
				return fmt.Sprintf("record %d has version %d; versions start at 1", id, v)
			}},
		{"id_counter", `SELECT m, '', n, 0 FROM (SELECT max(coalesce((SELECT max(id) FROM active), 0), coalesce((SELECT max(id) FROM archive), 0)) AS m, (SELECT value FROM meta WHERE name = 'next_id') AS n) WHERE m >= n`,
			func(id int64, _ string, n, _ int64) string {
				return fmt.Sprintf("highest id %d is not below the id counter %d; new records could reuse ids", id, n)
			}},
	}
	for _, p := range probes {
		rows, err := s.r.QueryContext(ctx, p.query+fmt.Sprintf(" LIMIT %d", maxViolations))
		if err != nil {
			return nil, fmt.Errorf("check %s: %w", p.kind, err)
		}
		for rows.Next() {
			var id, a, b int64
			var key string
			if err := rows.Scan(&id, &key, &a, &b); err != nil {
				rows.Close()
				return nil, fmt.Errorf("check %s: %w", p.kind, err)
			}
			add(crawlkeeper.Violation{Kind: p.kind, ID: id, Key: key, Message: p.msg(id, key, a, b)})
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return nil, fmt.Errorf("check %s: %w", p.kind, err)
		}
	}
	if err := s.checkSearch(ctx, add); err != nil {
		return nil, err
	}
	rep.OK = len(rep.Violations) == 0
	return rep, nil
}
