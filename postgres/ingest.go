package postgres

import (
	"time"

	"github.com/crawlkeeper/crawlkeeper"
	"github.com/crawlkeeper/crawlkeeper/internal/sqlstore"
	"github.com/jackc/pgx/v5"
)

// queueInsertActive queues multi-row inserts of full records into active.
func queueInsertActive(batch *pgx.Batch, recs []*crawlkeeper.Record) {
	for _, c := range chunks(recs, recordBytes) {
		a := newRecordArrays(c, false)
		batch.Queue(`INSERT INTO active (`+recordCols+`)
			SELECT * FROM unnest($1::bigint[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::bytea[], $8::text[], $9::bigint[],
				$10::bigint[], $11::bigint[], $12::bigint[], $13::bigint[], $14::text[], $15::bigint[], $16::bigint[], $17::text[], $18::bytea[],
				$19::text[], $20::text[], $21::text[], $22::text[])`,
			a.args()...)
	}
}

// queueInsertArchive queues multi-row inserts of full records into the
// archive, payloads compressed, archived at and for the given reasons.
func queueInsertArchive(batch *pgx.Batch, recs []*crawlkeeper.Record, at time.Time, reasons []crawlkeeper.ArchiveReason) {
	off := 0
	for _, c := range chunks(recs, recordBytes) {
		a := newRecordArrays(c, true)
		ats, rs := make([]int64, len(c)), make([]string, len(c))
		for i := range c {
			ats[i], rs[i] = at.UnixMicro(), string(reasons[off+i])
		}
		off += len(c)
		batch.Queue(`INSERT INTO archive (`+archiveCols+`, item_bytes)
			SELECT * FROM unnest($1::bigint[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::bytea[], $8::text[], $9::bigint[],
				$10::bigint[], $11::bigint[], $12::bigint[], $13::bigint[], $14::text[], $15::bigint[], $16::bigint[], $17::text[], $18::bytea[],
				$19::text[], $20::text[], $21::text[], $22::text[], $23::bigint[], $24::text[], $25::bigint[])`,
			append(a.args(), ats, rs, a.itemBytes)...)
	}
}

// queueTouch queues the update of an unchanged delivery: last_updated_at,
// event_at, date_errors, last_round and last_target.
func queueTouch(batch *pgx.Batch, table string, recs []*crawlkeeper.Record) {
	if len(recs) == 0 {
		return
	}
	id, updated := make([]int64, len(recs)), make([]int64, len(recs))
	event, dateErrors := make([]*int64, len(recs)), make([]*string, len(recs))
	round, target := make([]string, len(recs)), make([]string, len(recs))
	for i, r := range recs {
		id[i], updated[i] = r.ID, r.LastUpdatedAt.UnixMicro()
		event[i], dateErrors[i] = sqlstore.Micros(r.EventAt), sqlstore.DateErrorsText(r.DateErrors)
		round[i], target[i] = enc(r.LastRound), enc(r.LastTarget)
	}
	batch.Queue(`UPDATE `+table+` a SET last_updated_at = u.last_updated_at, event_at = u.event_at, date_errors = u.date_errors,
			last_round = u.last_round, last_target = u.last_target
		FROM unnest($1::bigint[], $2::bigint[], $3::bigint[], $4::text[], $5::text[], $6::text[]) AS u(id, last_updated_at, event_at, date_errors, last_round, last_target)
		WHERE a.id = u.id`, id, updated, event, dateErrors, round, target)
}

// recordArrays are the columns of several records, one array per column,
// for statements over unnest().
type recordArrays struct {
	id                                         []int64
	key, keyParts, source, title, url          []string
	item, derived                              [][]byte
	contentHash, chain                         []string
	crawled, lastUpdated, lastChanged, version []int64
	eventAt, processedAt                       []*int64
	dateErrors                                 []*string
	processedVersion, itemBytes                []int64
	searchText                                 []*string
	searchConfig                               []string
	lastRound, lastTarget                      []string
}

// newRecordArrays builds the column arrays of recs, for the archive table
// when archive is set. Items are stored as they are in either table:
// PostgreSQL compresses large values itself (see move.go).
func newRecordArrays(recs []*crawlkeeper.Record, archive bool) *recordArrays {
	n := len(recs)
	a := &recordArrays{
		id: make([]int64, n), key: make([]string, n), keyParts: make([]string, n), source: make([]string, n),
		title: make([]string, n), url: make([]string, n), item: make([][]byte, n), derived: make([][]byte, n),
		contentHash: make([]string, n), chain: make([]string, n), crawled: make([]int64, n), lastUpdated: make([]int64, n),
		lastChanged: make([]int64, n), version: make([]int64, n), eventAt: make([]*int64, n), processedAt: make([]*int64, n),
		dateErrors: make([]*string, n), processedVersion: make([]int64, n), itemBytes: make([]int64, n),
		searchText: make([]*string, n), searchConfig: make([]string, n),
		lastRound: make([]string, n), lastTarget: make([]string, n),
	}
	for i, r := range recs {
		a.id[i], a.key[i], a.keyParts[i], a.source[i] = r.ID, enc(r.Key), sqlstore.KeyPartsText(r.KeyParts), enc(r.Source)
		a.title[i], a.url[i], a.contentHash[i], a.chain[i] = enc(r.Title), enc(r.URL), r.ContentHash, enc(r.ProcessedChain)
		a.item[i], a.derived[i] = r.Item, sqlstore.Blob(r.Derived)
		if a.item[i] == nil {
			a.item[i] = []byte{}
		}
		a.itemBytes[i] = int64(len(r.Item))
		a.crawled[i], a.lastUpdated[i], a.lastChanged[i] = r.CrawledAt.UnixMicro(), r.LastUpdatedAt.UnixMicro(), r.LastChangedAt.UnixMicro()
		a.version[i], a.processedVersion[i] = r.Version, r.ProcessedVersion
		a.eventAt[i], a.processedAt[i] = sqlstore.Micros(r.EventAt), sqlstore.Micros(r.ProcessedAt)
		a.dateErrors[i] = sqlstore.DateErrorsText(r.DateErrors)
		a.searchText[i], a.searchConfig[i] = searchTextArg(r), searchConfig(r.SearchLanguage)
		a.lastRound[i], a.lastTarget[i] = enc(r.LastRound), enc(r.LastTarget)
	}
	return a
}

// args returns the arrays in recordCols order.
func (a *recordArrays) args() []any {
	return []any{a.id, a.key, a.keyParts, a.source, a.title, a.url, a.item, a.contentHash, a.crawled,
		a.lastUpdated, a.lastChanged, a.version, a.eventAt, a.dateErrors, a.processedAt, a.processedVersion,
		a.chain, a.derived, a.searchText, a.searchConfig, a.lastRound, a.lastTarget}
}

func recordBytes(r *crawlkeeper.Record) int {
	return len(r.Item) + len(r.Title) + len(r.URL) + len(r.Derived) + len(r.SearchText) + 256
}

// chunks splits xs into runs of at most maxStatementBytes by size, each
// holding at least one element.
func chunks[T any](xs []T, size func(T) int) [][]T {
	var out [][]T
	start, bytes := 0, 0
	for i, x := range xs {
		n := size(x)
		if i > start && bytes+n > maxStatementBytes {
			out = append(out, xs[start:i])
			start, bytes = i, 0
		}
		bytes += n
	}
	if start < len(xs) {
		out = append(out, xs[start:])
	}
	return out
}
