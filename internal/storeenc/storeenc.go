// Package storeenc holds what every record store shares that is not a
// database's own: the field encodings that make a record read back byte for
// byte the same on every backend, the fields archive rules select on, the
// messages of check violations, and the redaction of store URLs. The SQL
// engines (through internal/sqlstore) and MongoDB use it; neither imports
// the other.
package storeenc

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/crawlkeeper/crawlkeeper"
)

// Every store keeps the embedded store's field encodings, so that a
// record reads back byte for byte the same on every backend: times are
// Unix microseconds (any instant the domain produces fits, which a
// DATETIME or timestamptz column would not promise), key_parts and
// date_errors are JSON arrays of strings (text in the SQL engines).

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

// Blob returns b, or nil for an empty value, which is stored as NULL.
func Blob(b []byte) []byte {
	if len(b) == 0 {
		return nil
	}
	return b
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

// Redact hides the password of a store URL for messages and logs.
func Redact(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "(unparsable URL)"
	}
	return u.Redacted()
}

// RedactErr returns err's text with the URL's password removed, since
// parse and driver errors may quote the connection string.
func RedactErr(err error, raw string) string {
	msg := err.Error()
	if u, perr := url.Parse(raw); perr == nil && u.User != nil {
		if p, ok := u.User.Password(); ok && p != "" {
			msg = strings.ReplaceAll(msg, p, "xxxxx")
		}
	}
	return msg
}

// ScratchName returns a new name for a throw-away database or schema of
// tests and the benchmark: "ck_scratch_", name's letters and digits
// (lower-cased, others as underscores, at most 40 bytes of them) and a
// random suffix. It is a valid unquoted identifier on every server.
func ScratchName(name string) string {
	out := []byte("ck_scratch_")
	for i := 0; i < len(name) && i < 40; i++ {
		switch c := name[i]; {
		case c >= 'a' && c <= 'z', c >= '0' && c <= '9', c == '_':
			out = append(out, c)
		case c >= 'A' && c <= 'Z':
			out = append(out, c+'a'-'A')
		default:
			out = append(out, '_')
		}
	}
	var b [4]byte
	rand.Read(b[:])
	return string(out) + "_" + hex.EncodeToString(b[:])
}
