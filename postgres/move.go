package postgres

import (
	"context"

	"github.com/crawlkeeper/crawlkeeper"
	"github.com/jackc/pgx/v5"
)

// The archive move runs inside PostgreSQL: one statement deletes from
// active the records still in the state they were selected in and inserts
// the deleted rows into the archive, so no payload travels to the client.
// The state check is crawlkeeper.RecordState.Holds (version and
// last_updated_at, both integers here) and, for the event rule,
// crawlkeeper.Move.EventStillDue, evaluated by the DELETE's WHERE,
// which PostgreSQL re-evaluates on the newest row version when another
// transaction changed the row meanwhile. Of a record listed twice, the
// first listing whose state holds applies, as in crawlkeeper.PlanMoves.
//
// Payloads go to the archive as they are in active. PostgreSQL compresses
// large values itself (TOAST, in rows over about 2 kB), and every reader
// of archived items (internal/zstd.Decompress) tells a zstd frame from
// plain JSON by its first bytes, so rows archived before, which hold zstd
// frames, and rows archived now read back alike on every path (records,
// export, restore, revival).

// moveSQL moves the records of $1..$4 and $7 (id, version,
// last_updated_at, reason, event cutoff or NULL) whose keys are among $5,
// archived at $6, and returns their ids. The columns are the shared
// store's (sqlstore.Store.RecordCols), so a column the records gain moves
// with them.
func moveSQL(recordCols string) string {
	return `WITH u AS (
		SELECT DISTINCT ON (u.id) u.id, u.version, u.updated, u.reason, u.ecut
		FROM unnest($1::bigint[], $2::bigint[], $3::bigint[], $4::text[], $7::bigint[]) WITH ORDINALITY AS u(id, version, updated, reason, ecut, ord)
		JOIN active x ON x.id = u.id AND x.version = u.version AND x.last_updated_at = u.updated AND (u.ecut IS NULL OR x.event_at <= u.ecut)
		ORDER BY u.id, u.ord),
	m AS (
		DELETE FROM active a USING u
		WHERE a.id = u.id AND a.version = u.version AND a.last_updated_at = u.updated AND (u.ecut IS NULL OR a.event_at <= u.ecut) AND a.key = ANY($5::text[])
		RETURNING a.*, u.reason)
	INSERT INTO archive (` + recordCols + `, item_bytes, archived_at, archive_reason)
	SELECT ` + recordCols + `, length(item), $6, reason FROM m
	RETURNING id, source, date_errors IS NOT NULL`
}

// lockKeys locks the keys of the records with ids in table (see the
// package comment) and returns them as stored. A record that enters the
// table after this statement has a key that is not locked, and the
// caller leaves it alone.
func lockKeys(ctx context.Context, tx pgx.Tx, table string, ids []int64) ([]string, error) {
	rows, err := tx.Query(ctx, `WITH k AS (SELECT key FROM `+table+` WHERE id = ANY($1)),
		l AS (INSERT INTO record_keys (key) SELECT key FROM k ORDER BY key ON CONFLICT (key) DO UPDATE SET key = excluded.key WHERE false)
		SELECT key FROM k`, ids)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, pgx.RowTo[string])
}

// move archives the records of moves still in their selected state, in
// tx, and returns their ids in the order of moves; errs counts the moved
// records with date errors out of the active counts.
func move(ctx context.Context, tx pgx.Tx, recordCols string, moves []crawlkeeper.Move, at int64, errs crawlkeeper.DateErrorCounts) ([]int64, error) {
	n := len(moves)
	ids, versions, updated, reasons := make([]int64, n), make([]int64, n), make([]int64, n), make([]string, n)
	ecuts := make([]*int64, n)
	for i, m := range moves {
		ids[i], versions[i], updated[i], reasons[i] = m.ID, m.Version, m.LastUpdatedAt.UnixMicro(), string(m.Reason)
		if m.EventBefore != nil {
			c := crawlkeeper.Truncate(*m.EventBefore).UnixMicro()
			ecuts[i] = &c
		}
	}
	keys, err := lockKeys(ctx, tx, "active", ids)
	if err != nil || len(keys) == 0 {
		return []int64{}, err
	}
	rows, err := tx.Query(ctx, moveSQL(recordCols), ids, versions, updated, reasons, keys, at, ecuts)
	if err != nil {
		return nil, err
	}
	done := map[int64]bool{}
	var id int64
	var source string
	var dateErrors bool
	_, err = pgx.ForEachRow(rows, []any{&id, &source, &dateErrors}, func() error {
		done[id] = true
		if dateErrors {
			errs.AddSource(dec(source), -1)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	moved := make([]int64, 0, len(done))
	for _, id := range ids {
		if done[id] {
			moved = append(moved, id)
			delete(done, id)
		}
	}
	return moved, nil
}
