package backends_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/crawlkeeper/crawlkeeper"
	"github.com/crawlkeeper/crawlkeeper/backends"
)

func TestOpenStoreErrors(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	for _, tc := range []struct {
		name, url, code, want string
	}{
		{"UnknownScheme", "ftp://u:secret@x/y", crawlkeeper.EINVALID, `unknown store scheme "ftp"`},
		{"NotAURL", "postgres://u:secret@host:5432%zz/db", crawlkeeper.EINVALID, "is not a URL"},
		// The server schemes reach their backend, which reports the
		// closed port as unavailable.
		{"Postgres", "postgres://u:secret@127.0.0.1:1/db?connect_timeout=2", crawlkeeper.EUNAVAILABLE, "PostgreSQL"},
		{"PostgreSQL", "postgresql://u:secret@127.0.0.1:1/db?connect_timeout=2", crawlkeeper.EUNAVAILABLE, "PostgreSQL"},
		{"MySQL", "mysql://u:secret@127.0.0.1:1/db?timeout=2s", crawlkeeper.EUNAVAILABLE, "MySQL"},
		{"MariaDB", "mariadb://u:secret@127.0.0.1:1/db?timeout=2s", crawlkeeper.EUNAVAILABLE, "MySQL/MariaDB"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, err := backends.OpenStore(ctx, tc.url, t.TempDir())
			if err == nil {
				s.Close()
				t.Fatalf("opened %s", tc.url)
			}
			if crawlkeeper.ErrorCode(err) != tc.code || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %q (code %s), want code %s and %q", err, crawlkeeper.ErrorCode(err), tc.code, tc.want)
			}
			if strings.Contains(err.Error(), "secret") {
				t.Fatalf("error shows the password: %v", err)
			}
		})
	}
}
