package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"

	"github.com/crawlkeeper/crawlkeeper"
	"github.com/crawlkeeper/crawlkeeper/backends"
	"github.com/crawlkeeper/crawlkeeper/bench"
)

// commandSetup returns what the whole-path results of the benchmark run:
// binary (this executable when empty) and the minimal programs, built in
// dir from this checkout.
func commandSetup(a *app, scratch, binary, dir string) bench.CommandSetup {
	m := &minimalPrograms{dir: dir, built: map[string]string{}, errs: map[string]error{}}
	setup := bench.CommandSetup{
		Crawlkeeper: binary,
		Scratch: func(ctx context.Context, name string) (string, func(), error) {
			return backends.NewScratch(ctx, a.storeURL, scratch, name)
		},
		OpenStore: func(ctx context.Context, u string) (crawlkeeper.Store, error) {
			return backends.OpenStore(ctx, u, "")
		},
		Minimal: m.get,
	}
	if binary == "" {
		exe, err := os.Executable()
		if err == nil && strings.HasSuffix(exe, ".test") {
			// A test binary runs its tests whatever its arguments.
			err = errors.New("this process is a test binary: pass --binary with a crawlkeeper executable")
		}
		if err != nil {
			setup.Minimal = func(context.Context, string) (string, error) { return "", err }
		}
		setup.Crawlkeeper = exe
	}
	return setup
}

// minimalPrograms builds the minimal program of the whole-path results
// (internal/rawbench/rawcli) once per engine, with the Go toolchain, from
// the crawlkeeper checkout the benchmark runs in.
type minimalPrograms struct {
	dir   string
	mu    sync.Mutex
	built map[string]string
	errs  map[string]error
}

// get returns the minimal program for the engine of the store at u.
func (m *minimalPrograms) get(ctx context.Context, u string) (string, error) {
	tag, err := engineTag(u)
	if err != nil {
		return "", err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if p, ok := m.built[tag]; ok {
		return p, nil
	}
	if err, ok := m.errs[tag]; ok {
		return "", err
	}
	p, err := m.build(ctx, tag)
	if err != nil {
		m.errs[tag] = err
		return "", err
	}
	m.built[tag] = p
	return p, nil
}

// engineTag is the build tag of rawcli for the store at u.
func engineTag(u string) (string, error) {
	scheme := "sqlite"
	if u != "" {
		pu, err := url.Parse(u)
		if err != nil {
			return "", err
		}
		scheme = pu.Scheme
	}
	switch scheme {
	case "sqlite", "sqlite3":
		return "sqlite", nil
	case "postgres", "postgresql":
		return "postgres", nil
	case "mysql", "mariadb":
		return "mysql", nil
	}
	return "", fmt.Errorf("no minimal program for %s stores (there is one for SQLite, PostgreSQL and MySQL/MariaDB)", scheme)
}

func (m *minimalPrograms) build(ctx context.Context, tag string) (string, error) {
	gobin, err := exec.LookPath("go")
	if err != nil {
		return "", errors.New("the Go toolchain is not on PATH; the minimal program is built with it when the benchmark runs")
	}
	// The module of the working directory must be crawlkeeper's, whose
	// internal/rawbench/rawcli is the program.
	out, err := exec.CommandContext(ctx, gobin, "env", "GOMOD").Output()
	gomod := strings.TrimSpace(string(out))
	if err != nil || gomod == "" || gomod == os.DevNull {
		return "", errors.New("the benchmark does not run in a crawlkeeper checkout; the minimal program is built from its internal/rawbench/rawcli: run bench from the repository")
	}
	if b, err := os.ReadFile(gomod); err != nil || !bytes.Contains(b, []byte("module github.com/crawlkeeper/crawlkeeper\n")) {
		return "", fmt.Errorf("%s is not crawlkeeper's go.mod; the minimal program is built from its internal/rawbench/rawcli: run bench from the repository", gomod)
	}
	path := filepath.Join(m.dir, "rawcli-"+tag)
	cmd := exec.CommandContext(ctx, gobin, "build", "-tags", tag, "-o", path, "./internal/rawbench/rawcli")
	cmd.Dir = filepath.Dir(gomod)
	// go.mod's versions of the drivers, as crawlkeeper is built with, not
	// a workspace's.
	cmd.Env = append(os.Environ(), "GOWORK=off")
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build -tags %s ./internal/rawbench/rawcli: %v: %s", tag, err, bytes.TrimSpace(out))
	}
	return path, nil
}
