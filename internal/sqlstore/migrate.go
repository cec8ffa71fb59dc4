package sqlstore

import (
	"context"
	"fmt"
	"io/fs"
	"path"
	"sort"
	"strconv"
	"strings"

	"github.com/crawlkeeper/crawlkeeper"
)

// Migrate applies the migrations of files (migrations/NNN_name.sql, in
// name order) that the table schema_migrations does not list, through q,
// creating the table first. apply runs one migration's body and records
// its version in schema_migrations, each engine in its own way (in one
// transaction, or statement by statement where DDL commits by itself).
func Migrate(ctx context.Context, q Querier, files fs.FS, apply func(version int, name, body string) error) error {
	if _, err := q.Exec(ctx, `CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER NOT NULL PRIMARY KEY, applied_at BIGINT NOT NULL)`); err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	names, err := fs.Glob(files, "migrations/*.sql")
	if err != nil {
		return err
	}
	sort.Strings(names)
	for _, name := range names {
		base := path.Base(name)
		v, err := strconv.Atoi(strings.SplitN(base, "_", 2)[0])
		if err != nil {
			return fmt.Errorf("migration %s: name must start with a number", base)
		}
		var n int64
		if err := q.QueryRow(ctx, `SELECT count(*) FROM schema_migrations WHERE version = ?`, v).Scan(&n); err != nil {
			return fmt.Errorf("migrate: %w", err)
		}
		if n > 0 {
			continue
		}
		body, err := fs.ReadFile(files, name)
		if err != nil {
			return err
		}
		if err := apply(v, base, string(body)); err != nil {
			return fmt.Errorf("migrate %s: %w", base, err)
		}
	}
	return nil
}

// Ready completes an engine's Open. With mustExist, a database without the
// store's tables (exists counts them) is crawlkeeper.NoStoreError, and
// nothing is created; then the engine's migrations run, and the monitor's
// dictionary migration. On failure it calls closeAll.
func (s *Store) Ready(ctx context.Context, where string, mustExist bool, exists string, migrate func(context.Context) error, closeAll func()) error {
	err := s.ready(ctx, where, mustExist, exists, migrate)
	if err != nil {
		closeAll()
	}
	return err
}

func (s *Store) ready(ctx context.Context, where string, mustExist bool, exists string, migrate func(context.Context) error) error {
	if mustExist {
		var n int64
		if err := s.e.Reader().QueryRow(ctx, exists).Scan(&n); err != nil {
			return s.e.Wrap("open "+where, err)
		}
		if n == 0 {
			return crawlkeeper.NoStoreError(where)
		}
	}
	if err := migrate(ctx); err != nil {
		return err
	}
	return s.MigrateMonitorDict(ctx, nil)
}
