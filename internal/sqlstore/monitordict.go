package sqlstore

import (
	"bytes"
	"context"
	"fmt"
	"strings"
)

// The target dictionary is stored in blocks (table monitor_dict, see the
// engines' migration 020): a row holds n consecutive names, ids first_id
// to first_id+n-1, joined by newlines. The embedded monitor reads the
// dictionary whole, in id order, and looks names up in memory, so the
// table needs no index on names, and a block of a page's worth of names
// costs one row's overhead instead of one per name. New names fill the
// last block up to the engine's MonitorDictBlock bytes, then start new
// ones.

// dictBlock is one row of monitor_dict.
type dictBlock struct {
	first, n int64
	names    []byte
}

// lastBlock reads the block with the highest ids; ok is false when the
// dictionary is empty.
func (t *monitorTx) lastBlock() (b dictBlock, ok bool, err error) {
	err = t.tx.QueryRow(t.ctx, `SELECT first_id, n, names FROM monitor_dict ORDER BY first_id DESC LIMIT 1`).Scan(&b.first, &b.n, &b.names)
	if NoRows(err) {
		return b, false, nil
	}
	return b, err == nil, err
}

// appendNames adds names under the ids first, first+1, ...: into the last
// block while it has room, then into new blocks.
func (t *monitorTx) appendNames(first uint32, names []string) error {
	budget := t.s.e.MonitorDictBlock()
	last, ok, err := t.lastBlock()
	if err != nil {
		return err
	}
	if size := last.first + last.n; size != int64(first) {
		return fmt.Errorf("the dictionary holds %d names, not %d: ids must stay dense", size, first)
	}
	for _, n := range names {
		if strings.IndexByte(n, '\n') >= 0 || n == "" {
			return fmt.Errorf("target name %q cannot be stored (empty, or a line break)", n)
		}
	}
	i := 0
	if ok && len(last.names) < budget {
		buf := bytes.NewBuffer(last.names)
		for i < len(names) && buf.Len()+1+len(names[i]) <= budget {
			buf.WriteByte('\n')
			buf.WriteString(names[i])
			i++
		}
		if i > 0 {
			if _, err := t.tx.Exec(t.ctx, `UPDATE monitor_dict SET n = ?, names = ? WHERE first_id = ?`, last.n+int64(i), buf.Bytes(), last.first); err != nil {
				return err
			}
		}
	}
	var rows [][]any
	for i < len(names) {
		start := i
		var buf bytes.Buffer
		buf.WriteString(names[i])
		for i++; i < len(names) && buf.Len()+1+len(names[i]) <= budget; i++ {
			buf.WriteByte('\n')
			buf.WriteString(names[i])
		}
		rows = append(rows, []any{int64(first) + int64(start), int64(i - start), buf.Bytes()})
	}
	if len(rows) == 0 {
		return nil
	}
	return t.s.e.Insert(t.ctx, t.tx, "monitor_dict", []string{"first_id", "n", "names"}, rows, 0)
}

// namesFrom calls fn with every name whose id is at least from, in id
// order. It reads from the block holding from; a dictionary with no name
// at or past from costs one index probe and no block.
func (t *monitorTx) namesFrom(from uint32, fn func(id uint32, name string) error) error {
	return EachRow(t.ctx, t.tx, func(rows Rows) error {
		var b dictBlock
		if err := rows.Scan(&b.first, &b.n, &b.names); err != nil {
			return err
		}
		id := b.first
		for len(b.names) > 0 || id < b.first+b.n {
			line := b.names
			if k := bytes.IndexByte(line, '\n'); k >= 0 {
				line, b.names = line[:k], line[k+1:]
			} else {
				b.names = nil
			}
			if id >= b.first+b.n || len(line) == 0 {
				return fmt.Errorf("dictionary block %d does not hold %d names", b.first, b.n)
			}
			if id >= int64(from) {
				if err := fn(uint32(id), string(line)); err != nil {
					return err
				}
			}
			id++
		}
		return nil
	}, `SELECT first_id, n, names FROM monitor_dict
		WHERE first_id >= coalesce((SELECT max(first_id) FROM monitor_dict WHERE first_id <= ?), 0) AND first_id + n > ?
		ORDER BY first_id`, int64(from), int64(from))
}

// Dictionary layouts, in monitor_meta.dict_layout.
const (
	dictCopying = 1 // monitor_targets is being copied into blocks
	dictCopied  = 2 // copied; monitor_targets is still to be dropped
	dictBlocks  = 3 // blocks only
)

// dictCopyBatch is how many names one step of the migration copies.
const dictCopyBatch = 20000

// MigrateMonitorDict copies a dictionary of the first layout (table
// monitor_targets, a row and an index entry per name) into blocks, then
// drops the old table. Each step copies the next names in one monitor
// write transaction, continuing from the size of monitor_dict, so a
// migration killed at any point resumes where it stopped, and ids never
// change. step, when not nil, is called after each committed step with
// the number of names copied so far; an error stops the migration there
// (tests stop it as a kill would). Every engine runs it when it opens,
// after its migrations.
func (s *Store) MigrateMonitorDict(ctx context.Context, step func(copied int64) error) error {
	for {
		var layout, copied int64
		err := s.e.Write(ctx, "monitor", func(q Querier) error {
			t := &monitorTx{s: s, ctx: ctx, tx: q, write: true}
			if err := t.lock(); err != nil {
				return err
			}
			if err := q.QueryRow(ctx, `SELECT value FROM monitor_meta WHERE name = 'dict_layout'`).Scan(&layout); err != nil {
				return fmt.Errorf("read the dictionary layout: %w", err)
			}
			if layout != dictCopying {
				return nil
			}
			last, _, err := t.lastBlock()
			if err != nil {
				return err
			}
			copied = last.first + last.n
			var names []string
			err = EachRow(ctx, q, func(rows Rows) error {
				var id int64
				var name []byte
				if err := rows.Scan(&id, &name); err != nil {
					return err
				}
				if want := copied + int64(len(names)); id != want {
					return fmt.Errorf("monitor_targets has no name for id %d: the dictionary is damaged", want)
				}
				names = append(names, string(name))
				return nil
			}, `SELECT id, name FROM monitor_targets WHERE id >= ? ORDER BY id LIMIT `+fmt.Sprint(dictCopyBatch), copied)
			if err != nil {
				return fmt.Errorf("read monitor_targets: %w", err)
			}
			if len(names) == 0 {
				layout = dictCopied
				_, err := q.Exec(ctx, `UPDATE monitor_meta SET value = ? WHERE name = 'dict_layout'`, layout)
				return err
			}
			err = t.appendNames(uint32(copied), names)
			copied += int64(len(names))
			return err
		})
		if err != nil {
			return fmt.Errorf("migrate the monitor's dictionary: %w", err)
		}
		switch layout {
		case dictCopying:
			if step != nil {
				if err := step(copied); err != nil {
					return err
				}
			}
			continue
		case dictCopied:
			// DDL commits by itself on MySQL: drop first, then record it,
			// so a kill in between drops again (IF EXISTS) next time.
			if _, err := s.e.Writer().Exec(ctx, `DROP TABLE IF EXISTS monitor_targets`); err != nil {
				return fmt.Errorf("drop monitor_targets: %w", err)
			}
			if _, err := s.e.Writer().Exec(ctx, `UPDATE monitor_meta SET value = ? WHERE name = 'dict_layout'`, dictBlocks); err != nil {
				return fmt.Errorf("migrate the monitor's dictionary: %w", err)
			}
		}
		return nil
	}
}
