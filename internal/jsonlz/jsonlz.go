// Package jsonlz writes and reads JSON-lines files, compressed with
// Zstandard (github.com/klauspost/compress/zstd) when the name ends in
// ".zst". Exports are written to a temporary file, synced and renamed on
// Close, so a crash never leaves a half-written export under the final
// name.
package jsonlz

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/klauspost/compress/zstd"
)

// Writer writes one JSON value per line.
type Writer struct {
	path, tmp string
	f         *os.File
	z         *zstd.Encoder
	buf       *bufio.Writer
	enc       *json.Encoder
	n         int
}

// Create starts a JSON-lines file at path.
func Create(path string) (*Writer, error) {
	dir := filepath.Dir(path)
	f, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return nil, fmt.Errorf("create %s: %w", path, err)
	}
	w := &Writer{path: path, tmp: f.Name(), f: f}
	var out io.Writer = f
	if strings.HasSuffix(path, ".zst") {
		w.z, err = zstd.NewWriter(f, zstd.WithEncoderLevel(zstd.SpeedBetterCompression))
		if err != nil {
			f.Close()
			os.Remove(w.tmp)
			return nil, err
		}
		out = w.z
	}
	w.buf = bufio.NewWriterSize(out, 256<<10)
	w.enc = json.NewEncoder(w.buf)
	w.enc.SetEscapeHTML(false)
	return w, nil
}

// Write appends v as one line.
func (w *Writer) Write(v any) error {
	w.n++
	return w.enc.Encode(v)
}

// Count returns the lines written so far.
func (w *Writer) Count() int { return w.n }

// Close flushes, syncs and moves the file to its final name. Only after
// Close returns nil is the export complete.
func (w *Writer) Close() error {
	err := w.buf.Flush()
	if w.z != nil && err == nil {
		err = w.z.Close()
	}
	if err == nil {
		err = w.f.Sync()
	}
	if cerr := w.f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(w.tmp, w.path)
	}
	if err != nil {
		os.Remove(w.tmp)
		return fmt.Errorf("write %s: %w", w.path, err)
	}
	return nil
}

// Abort discards the file.
func (w *Writer) Abort() {
	if w.z != nil {
		w.z.Close()
	}
	w.f.Close()
	os.Remove(w.tmp)
}

// Open reads a JSON-lines file written by Writer (or any JSON-lines file,
// compressed when its name ends in ".zst").
func Open(path string) (io.ReadCloser, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	if !strings.HasSuffix(path, ".zst") {
		return f, nil
	}
	z, err := zstd.NewReader(f)
	if err != nil {
		f.Close()
		return nil, err
	}
	return readCloser{Reader: z, close: func() error { z.Close(); return f.Close() }}, nil
}

type readCloser struct {
	io.Reader
	close func() error
}

func (r readCloser) Close() error { return r.close() }
