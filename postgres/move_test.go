package postgres_test

import (
	"bytes"
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/crawlkeeper/crawlkeeper"
	"github.com/crawlkeeper/crawlkeeper/internal/testdb"
	"github.com/crawlkeeper/crawlkeeper/internal/zstd"
	"github.com/crawlkeeper/crawlkeeper/postgres"
	"github.com/crawlkeeper/crawlkeeper/storetest"
)

// TestArchivedPayloads shows that the archive move stores items as they
// are, and that a row archived by an earlier version, whose item is a zstd
// frame, reads back the same through every path: records, the export's
// listing, revival and restore.
func TestArchivedPayloads(t *testing.T) {
	ctx := context.Background()
	u := testdb.PostgresURL(t)
	st := testdb.MustOpen(t, u, postgres.Open)
	conn, err := pgx.Connect(ctx, u)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	e := &storetest.Env[crawlkeeper.Store]{TB: t, Store: st, Config: &crawlkeeper.Config{}, Now: storetest.T0}
	body := `{"title":"Payload","url":"https://pay.test/1","text":"` + string(bytes.Repeat([]byte("crawled text "), 300)) + `"}`
	id := e.Ingest(body, `{"title":"Other","url":"https://pay.test/2"}`).IDs[0]
	other := e.Ingest(`{"title":"Other","url":"https://pay.test/2"}`).IDs[0]
	active := e.MustGet(id)
	for _, x := range []int64{id, other} {
		r := e.MustGet(x)
		if moved, err := st.Archive(ctx, []crawlkeeper.Move{{ID: x, Version: r.Version, LastUpdatedAt: r.LastUpdatedAt, Reason: crawlkeeper.ReasonManual}}, e.Now); err != nil || len(moved) != 1 {
			t.Fatalf("archive %d: %v %v", x, moved, err)
		}
	}
	var stored []byte
	var itemBytes int64
	if err := conn.QueryRow(ctx, `SELECT item, item_bytes FROM archive WHERE id = $1`, id).Scan(&stored, &itemBytes); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(stored, active.Item) || itemBytes != int64(len(active.Item)) {
		t.Fatalf("archived item stored as %d bytes (item_bytes %d), want the active item's %d bytes as they are", len(stored), itemBytes, len(active.Item))
	}

	// A row as an earlier version archived it: the item a zstd frame.
	frame := zstd.Compress(nil, active.Item)
	if bytes.Equal(frame, active.Item) {
		t.Fatal("the test payload does not compress")
	}
	if _, err := conn.Exec(ctx, `UPDATE archive SET item = $2 WHERE id = $1`, id, frame); err != nil {
		t.Fatal(err)
	}
	if r := e.MustGet(id); !bytes.Equal(r.Item, active.Item) {
		t.Fatalf("a zstd row reads back as %q", r.Item)
	}
	recs, err := st.ArchivedBefore(ctx, nil, e.Now.Add(time.Hour), 0, 10)
	if err != nil || len(recs) != 2 || !bytes.Equal(recs[0].Item, active.Item) {
		t.Fatalf("export listing = %v %v", recs, err)
	}
	st2, err := st.Stats(ctx)
	if err != nil || st2.ArchiveRawBytes <= 0 || st2.ArchiveStoredBytes <= 0 || st2.ArchiveStoredBytes >= st2.ArchiveRawBytes {
		t.Fatalf("stats %+v %v: want stored bytes (as PostgreSQL stores them) below raw bytes for a compressed row", st2, err)
	}
	// Revival reads the zstd row and writes the record back to active.
	e.Now = e.Now.Add(time.Hour)
	if res := e.Ingest(body); res.Outcomes[0] != crawlkeeper.OutcomeRevived {
		t.Fatalf("re-crawl: %v, want revived", res.Outcomes[0])
	}
	if r := e.MustGet(id); r.Archived() || !bytes.Equal(r.Item, active.Item) {
		t.Fatalf("revived record: archived %v, item %d bytes", r.Archived(), len(r.Item))
	}
	if restored, err := st.Restore(ctx, []int64{other}); err != nil || len(restored) != 1 {
		t.Fatalf("restore = %v %v", restored, err)
	}
	e.MustCheck()
}
