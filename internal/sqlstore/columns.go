package sqlstore

import (
	"database/sql"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/crawlkeeper/crawlkeeper"
)

// The server stores keep the embedded store's column encodings, so that a
// record reads back byte for byte the same on every backend: times are
// Unix microseconds (any instant the domain produces fits, which a
// DATETIME or timestamptz column would not promise), key_parts and
// date_errors are JSON arrays of strings.

// KeyPartsText encodes key_parts; a nil slice is stored as [].
func KeyPartsText(xs []string) string {
	if xs == nil {
		xs = []string{}
	}
	b, _ := json.Marshal(xs)
	return string(b)
}

// DateErrorsText encodes date_errors; none is NULL.
func DateErrorsText(xs []string) *string {
	if len(xs) == 0 {
		return nil
	}
	b, _ := json.Marshal(xs)
	s := string(b)
	return &s
}

// Micros returns t in Unix microseconds, nil for a nil time.
func Micros(t *time.Time) *int64 {
	if t == nil {
		return nil
	}
	v := t.UnixMicro()
	return &v
}

// Time is the inverse of Micros.
func Time(us *int64) *time.Time {
	if us == nil {
		return nil
	}
	t := crawlkeeper.MicrosTime(*us)
	return &t
}

// NullTime returns the time of a nullable Unix-microseconds column.
func NullTime(us sql.NullInt64) *time.Time {
	if !us.Valid {
		return nil
	}
	t := crawlkeeper.MicrosTime(us.Int64)
	return &t
}

// Blob returns b, or nil for an empty value, which is stored as NULL.
func Blob(b []byte) []byte {
	if len(b) == 0 {
		return nil
	}
	return b
}

// LikePattern returns a LIKE pattern matching titles that contain q, with
// the wildcards of q escaped by esc and ASCII letters lower-cased (the
// stores compare it with a lower-cased title).
func LikePattern(q string, esc byte) string {
	e := string(esc)
	r := strings.NewReplacer(e, e+e, `%`, e+`%`, `_`, e+`_`)
	return "%" + r.Replace(LowerASCII(q)) + "%"
}

// LowerASCII lower-cases the ASCII letters of s and nothing else, the
// case folding of the embedded store's LIKE.
func LowerASCII(s string) string {
	b := []byte(s)
	for i, c := range b {
		if 'A' <= c && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
}

// Dedupe keeps the last of several values with the same key, in the order
// of their last appearance. Stores use it to turn a list of writes applied
// one by one into one multi-row statement: of several writes to the same
// row with the same condition, the last one decides the row.
func Dedupe[T any, K comparable](xs []T, key func(T) K) []T {
	last := make(map[K]int, len(xs))
	for i, x := range xs {
		last[key(x)] = i
	}
	if len(last) == len(xs) {
		return xs
	}
	out := make([]T, 0, len(last))
	for i, x := range xs {
		if last[key(x)] == i {
			out = append(out, x)
		}
	}
	return out
}

// IDVersion names a record version, the condition of a version-checked
// write.
type IDVersion struct{ ID, Version int64 }

// ViolationMessage formats the message of a Check violation the way the
// embedded store does, so reports read the same on every backend.
func ViolationMessage(kind string, id int64, key string, a, b int64) string {
	const layout = "2006-01-02T15:04:05.999999Z07:00"
	switch kind {
	case "key_in_both":
		return fmt.Sprintf("key %s is active (id %d) and archived (id %d)", key, id, a)
	case "duplicate_id":
		return fmt.Sprintf("id %d is both active and archived", id)
	case "crawled_after_updated":
		return fmt.Sprintf("record %d has crawled_at %s after last_updated_at %s", id, crawlkeeper.MicrosTime(a).Format(layout), crawlkeeper.MicrosTime(b).Format(layout))
	case "history_gap":
		return fmt.Sprintf("record %d (version %d) has history versions that are not contiguous up to version %d (%d missing)", id, a, a-1, b)
	case "history_orphan":
		return fmt.Sprintf("history of record %d exists but the record does not", id)
	case "version_invalid":
		return fmt.Sprintf("record %d has version %d; versions start at 1", id, a)
	case "date_error_count":
		return fmt.Sprintf("source %q counts %d active records with date errors, and %d have them: stop the processes that write to the store and run crawlkeeper check --recount", key, a, b)
	case "id_counter":
		return fmt.Sprintf("highest id %d is not below the id counter %d; new records could reuse ids", id, a)
	}
	return fmt.Sprintf("%s: record %d", kind, id)
}

// MaxViolations bounds each kind of violation listed by Check, so a badly
// broken store still gets a readable report.
const MaxViolations = 1000

// Probe is one invariant Check verifies: a query returning rows of (id,
// key, a, b) for each violation, read by ViolationMessage.
type Probe struct {
	Kind  string
	Query string
}

// DueColumn names the timestamp an archive rule selects on: the column on
// the SQL stores, the field on MongoDB. Every store indexes it as (column,
// id).
func DueColumn(rule crawlkeeper.DueRule) (string, error) {
	switch rule {
	case crawlkeeper.DueByAge:
		return "crawled_at", nil
	case crawlkeeper.DueByStale:
		return "last_updated_at", nil
	case crawlkeeper.DueByEvent:
		return "event_at", nil
	}
	return "", crawlkeeper.Errorf(crawlkeeper.EINVALID, "unknown archive rule %q", rule)
}

// ExceptClause returns the SQL condition that leaves out the records due
// by any of except (DueQuery.Except), with arg turning a value into the
// engine's placeholder. event_at may be NULL, which is never due.
func ExceptClause(except []crawlkeeper.DueCondition, arg func(v any) string) (string, error) {
	var parts []string
	for _, c := range except {
		col, err := DueColumn(c.Rule)
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
