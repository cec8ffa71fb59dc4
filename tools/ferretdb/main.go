// Command ferretdb runs FerretDB (github.com/FerretDB/FerretDB) embedded,
// as a MongoDB-compatible server for crawlkeeper's MongoDB tests. The
// released cmd/ferretdb binary panics when built with `go install`
// because its version file is missing; the embeddable package has no such
// file, so this small program is the way to run it from the module proxy.
//
// It lives in a module of its own so the main module does not depend on
// FerretDB. Build and run it from this folder:
//
//	GOWORK=off go build -o /tmp/ferretdb-helper . && /tmp/ferretdb-helper
//
// then point the tests at it:
//
//	export CRAWLKEEPER_TEST_MONGO=mongodb://127.0.0.1:27017/
//
// # One command at a time
//
// FerretDB 1.24 runs a conditional update or delete as a read followed by
// a write by _id, so two concurrent conditional writes of one document can
// both succeed (an update and a delete conditioned on the same rev both
// did in 290 of 300 tries here), where MongoDB applies each
// single-document write atomically. crawlkeeper's MongoDB store relies on
// that atomicity, as MongoDB documents it, so by default this program
// puts a proxy in front of FerretDB that passes one command at a time
// (serialize.go): every command then runs alone, as atomic as MongoDB's.
// -serialize=false exposes FerretDB directly.
package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"syscall"

	"github.com/FerretDB/FerretDB/ferretdb"
)

func main() {
	listen := flag.String("listen", "127.0.0.1:27017", "TCP address to accept MongoDB clients on")
	handler := flag.String("handler", "sqlite", "storage handler: sqlite or postgresql")
	dir := flag.String("dir", "", "folder of the SQLite handler's files (default: a new temporary folder, removed on exit)")
	pgURL := flag.String("postgresql-url", "postgres://postgres@127.0.0.1:5432/test", "PostgreSQL URL of the postgresql handler")
	verbose := flag.Bool("v", false, "log every command at debug level")
	serialize := flag.Bool("serialize", true, "run one command at a time (see the package notes)")
	flag.Parse()
	if err := run(*listen, *handler, *dir, *pgURL, *verbose, *serialize); err != nil {
		fmt.Fprintln(os.Stderr, "ferretdb:", err)
		os.Exit(1)
	}
}

func run(listen, handler, dir, pgURL string, verbose, serialize bool) error {
	public := listen
	if serialize {
		backend, err := freeAddr()
		if err != nil {
			return err
		}
		listen = backend
	}
	level := slog.LevelWarn
	if verbose {
		level = slog.LevelDebug
	}
	logger := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: level}))
	cfg := &ferretdb.Config{Listener: ferretdb.ListenerConfig{TCP: listen}, Logger: logger, Handler: handler}
	switch handler {
	case "sqlite":
		if dir == "" {
			tmp, err := os.MkdirTemp("", "ferretdb-")
			if err != nil {
				return err
			}
			defer os.RemoveAll(tmp)
			dir = tmp
		}
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return err
		}
		// FerretDB wants a file: URI naming a folder, with the slash.
		cfg.SQLiteURL = "file:" + dir + "/"
	case "postgresql":
		cfg.PostgreSQLURL = pgURL
	default:
		return fmt.Errorf("unknown handler %q: use sqlite or postgresql", handler)
	}
	f, err := ferretdb.New(cfg)
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if !serialize {
		fmt.Fprintf(os.Stderr, "ferretdb: %s handler, listening on %s\n", handler, listen)
		return f.Run(ctx)
	}
	errc := make(chan error, 1)
	go func() { errc <- f.Run(ctx) }()
	ln, err := net.Listen("tcp", public)
	if err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "ferretdb: %s handler on %s, one command at a time on %s\n", handler, listen, public)
	go func() { <-ctx.Done(); ln.Close() }()
	go func() { errc <- proxy(ln, listen) }()
	return <-errc
}
