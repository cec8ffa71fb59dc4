package sqlstore

import (
	"database/sql"
	"strings"
	"time"

	"github.com/crawlkeeper/crawlkeeper"
	"github.com/crawlkeeper/crawlkeeper/internal/storeenc"
)

// NullTime returns the time of a nullable Unix-microseconds column.
func NullTime(us sql.NullInt64) *time.Time {
	if !us.Valid {
		return nil
	}
	t := crawlkeeper.MicrosTime(us.Int64)
	return &t
}

// LikePattern returns a LIKE pattern matching titles that contain q, with
// the wildcards of q escaped by esc and ASCII letters lower-cased (the
// stores compare it with a lower-cased title).
func LikePattern(q string, esc byte) string {
	e := string(esc)
	r := strings.NewReplacer(e, e+e, `%`, e+`%`, `_`, e+`_`)
	return "%" + r.Replace(storeenc.LowerASCII(q)) + "%"
}

// Probe is one invariant Check verifies: a query returning rows of (id,
// key, a, b) for each violation, read by ViolationMessage.
type Probe struct {
	Kind  string
	Query string
}

// ExceptClause returns the SQL condition that leaves out the records due
// by any of except (DueQuery.Except), with arg turning a value into the
// engine's placeholder. event_at may be NULL, which is never due.
func ExceptClause(except []crawlkeeper.DueCondition, arg func(v any) string) (string, error) {
	var parts []string
	for _, c := range except {
		col, err := storeenc.DueColumn(c.Rule)
		if err != nil {
			return "", err
		}
		parts = append(parts, "("+col+" IS NULL OR "+col+" > "+arg(c.Cutoff.UnixMicro())+")")
	}
	return strings.Join(parts, " AND "), nil
}

// HistoryCols are the history columns ScanHistory reads, in its order.
const HistoryCols = `record_id, version, item, content_hash, valid_from, valid_to`

// ScanHistory reads every row of a query over HistoryCols and hands each
// entry to fn, in row order.
func ScanHistory(rows Rows, fn func(crawlkeeper.HistoryEntry)) error {
	for rows.Next() {
		var h crawlkeeper.HistoryEntry
		var from, to int64
		var item []byte
		if err := rows.Scan(&h.RecordID, &h.Version, &item, &h.ContentHash, &from, &to); err != nil {
			return err
		}
		if item == nil {
			item = []byte{}
		}
		h.Item = item
		h.ValidFrom, h.ValidTo = crawlkeeper.MicrosTime(from), crawlkeeper.MicrosTime(to)
		fn(h)
	}
	return rows.Err()
}
