// Package sqlstoretest holds the tests every SQL engine of package
// sqlstore runs from its own tests, for what only the SQL stores do.
package sqlstoretest

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/crawlkeeper/crawlkeeper"
	"github.com/crawlkeeper/crawlkeeper/internal/sqlstore"
	"github.com/crawlkeeper/crawlkeeper/roaringmon"
)

// Opener opens another handle on one database, as another process would,
// and returns it as a store and as the shared SQL store it embeds; the
// caller closes the handles when the test ends.
type Opener func() (crawlkeeper.Store, *sqlstore.Store)

// dictNames returns n distinct target names: company names in Chinese
// and English, some longer than a hundred bytes.
func dictNames(n int) []string {
	zh := []string{"北京", "上海", "深圳", "杭州", "成都"}
	out := make([]string, n)
	for i := range out {
		switch {
		case i%101 == 0:
			out[i] = fmt.Sprintf("%s市第%d建筑工程有限公司%s分公司第三项目部第%d施工队", zh[i%5], i, zh[(i+1)%5], i%7)
		case i%2 == 0:
			out[i] = fmt.Sprintf("%s%d科技有限公司", zh[i%5], i)
		default:
			out[i] = fmt.Sprintf("Company %d Holdings Ltd.", i)
		}
	}
	return out
}

// RunDictMigration opens a store, puts its monitor's dictionary back in
// the first layout (table monitor_targets, created by oldDDL, the
// engine's own statement of it), stops the migration to blocks midway as
// a killed process would, then opens the database again: the migration
// finishes, and every name keeps its id.
func RunDictMigration(t *testing.T, open Opener, oldDDL string) {
	ctx := context.Background()
	_, s := open()
	w := s.Engine().Writer()
	exec := func(q string, args ...any) {
		t.Helper()
		if _, err := w.Exec(ctx, q, args...); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	const n = 45000 // three steps of the migration
	names := dictNames(n)
	exec(`DELETE FROM monitor_dict`)
	exec(oldDDL)
	for i := 0; i < n; i += 500 {
		var args []any
		for j := i; j < min(i+500, n); j++ {
			args = append(args, int64(j), s.Engine().MonitorName(names[j]))
		}
		exec(`INSERT INTO monitor_targets (id, name) VALUES `+strings.TrimSuffix(strings.Repeat("(?, ?),", len(args)/2), ","), args...)
	}
	exec(`UPDATE monitor_meta SET value = 1 WHERE name = 'dict_layout'`)

	killed := errors.New("killed")
	var steps []int64
	err := s.MigrateMonitorDict(ctx, func(copied int64) error {
		steps = append(steps, copied)
		if copied >= 20000 {
			return killed
		}
		return nil
	})
	if !errors.Is(err, killed) || len(steps) != 1 || steps[0] != 20000 {
		t.Fatalf("migration stopped after %v: %v", steps, err)
	}
	layout := func(st *sqlstore.Store) (v int64) {
		t.Helper()
		if err := st.Engine().Reader().QueryRow(ctx, `SELECT value FROM monitor_meta WHERE name = 'dict_layout'`).Scan(&v); err != nil {
			t.Fatal(err)
		}
		return v
	}
	if v := layout(s); v != 1 {
		t.Fatalf("layout %d after a stopped migration", v)
	}
	var old int64
	if err := w.QueryRow(ctx, `SELECT count(*) FROM monitor_targets`).Scan(&old); err != nil || old != n {
		t.Fatalf("monitor_targets holds %d names (%v) during the migration, want %d", old, err, n)
	}

	// Another process opens the database: the migration finishes.
	st2, s2 := open()
	if v := layout(s2); v != 3 {
		t.Fatalf("layout %d after the migration", v)
	}
	if err := s2.Engine().Reader().QueryRow(ctx, `SELECT count(*) FROM monitor_targets`).Scan(&old); err == nil {
		t.Fatalf("monitor_targets still exists after the migration (%d rows)", old)
	}
	var longest int64
	if err := s2.Engine().Reader().QueryRow(ctx, `SELECT max(length(names)) FROM monitor_dict`).Scan(&longest); err != nil || longest > int64(s2.Engine().MonitorDictBlock()) {
		t.Fatalf("longest block %d bytes (%v), over %d", longest, err, s2.Engine().MonitorDictBlock())
	}
	got := 0
	err = s2.ViewMonitor(ctx, func(v crawlkeeper.MonitorView) error {
		return v.TargetsFrom(0, func(id uint32, name string) error {
			if int(id) != got || name != names[got] {
				return fmt.Errorf("dictionary entry %d is %d %q, want %q", got, id, name, names[got])
			}
			got++
			return nil
		})
	})
	if err != nil || got != n {
		t.Fatalf("read %d of %d names: %v", got, n, err)
	}
	// The monitor finds them by name and gives the next id to a new one.
	m, err := roaringmon.Open(ctx, st2.(crawlkeeper.MonitorPersister), crawlkeeper.MonitorOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	for _, i := range []int{0, 19999, 20000, 33333, n - 1} {
		ts, err := m.Target(ctx, names[i])
		if err != nil || ts.ID != uint32(i) {
			t.Fatalf("%q = %+v %v, want id %d", names[i], ts, err, i)
		}
	}
	res, err := m.Queue(ctx, crawlkeeper.QueueRequest{Round: "1", Targets: []string{names[7], "a new one"}})
	if err != nil || res.NewTargets != 1 {
		t.Fatalf("queue after the migration: %+v %v", res, err)
	}
	for name, id := range map[string]uint32{names[7]: 7, "a new one": n} {
		if ts, err := m.Target(ctx, name); err != nil || ts.ID != id {
			t.Fatalf("%q = %+v %v, want id %d", name, ts, err, id)
		}
	}
	// Opening once more changes nothing.
	if _, s3 := open(); layout(s3) != 3 {
		t.Fatal("layout changed on another open")
	}
}

// RunDictBlocks checks how names fill the dictionary's blocks: many
// small additions share the last block, and a reader that knows the
// dictionary up to any id reads exactly the names after it.
func RunDictBlocks(t *testing.T, open Opener) {
	ctx := context.Background()
	st, s := open()
	p := st.(crawlkeeper.MonitorPersister)
	names := dictNames(3000)
	add := func(from, to int) {
		t.Helper()
		err := p.UpdateMonitor(ctx, func(tx crawlkeeper.MonitorTx) error { return tx.AddTargets(uint32(from), names[from:to]) })
		if err != nil {
			t.Fatal(err)
		}
	}
	for i := 0; i < 200; i++ {
		add(i, i+1)
	}
	add(200, 3000)
	// Ids must stay dense.
	err := p.UpdateMonitor(ctx, func(tx crawlkeeper.MonitorTx) error { return tx.AddTargets(3001, []string{"gap"}) })
	if err == nil {
		t.Fatal("a name added past the end of the dictionary")
	}
	var rows, total int64
	if err := s.Engine().Reader().QueryRow(ctx, `SELECT count(*), sum(n) FROM monitor_dict`).Scan(&rows, &total); err != nil {
		t.Fatal(err)
	}
	if total != 3000 || rows > 3000*40/int64(s.Engine().MonitorDictBlock())+2 {
		t.Fatalf("%d names in %d blocks", total, rows)
	}
	for _, from := range []int{0, 1, 199, 200, 1234, 2999, 3000, 5000} {
		var got []string
		err := p.ViewMonitor(ctx, func(v crawlkeeper.MonitorView) error {
			return v.TargetsFrom(uint32(from), func(id uint32, name string) error {
				if int(id) != from+len(got) {
					return fmt.Errorf("id %d after %d names from %d", id, len(got), from)
				}
				got = append(got, name)
				return nil
			})
		})
		if err != nil {
			t.Fatal(err)
		}
		want := names[min(from, 3000):]
		if strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Fatalf("from %d: %d names, want %d", from, len(got), len(want))
		}
	}
}
