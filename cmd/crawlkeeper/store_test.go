package main

import (
	"context"
	"path/filepath"

	"github.com/crawlkeeper/crawlkeeper/backends"
	"github.com/crawlkeeper/crawlkeeper/sqlite"
)

func openTestStore(data string) (*sqlite.Store, error) {
	return sqlite.Open(context.Background(), filepath.Join(data, backends.SQLiteFile))
}
