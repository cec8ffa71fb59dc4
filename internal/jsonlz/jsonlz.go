// Package jsonlz writes and reads JSON-lines files, compressed with
// Zstandard (github.com/klauspost/compress/zstd) when the name ends in
// ".zst".
//
// Create writes to a temporary file that Close syncs and renames, then
// syncs the folder, so a crash never leaves a half-written export under the
// final name and a finished one survives a power loss. CreateDurable
// writes under the final name from the start, for exports that must be
// durable in parts (a purge deletes each part once it is on disk): Sync
// makes every line written so far durable and readable, ending the current
// zstd frame (a file of concatenated frames is one valid stream).
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
	path, tmp string // tmp is empty for a durable writer
	f         *os.File
	z         *zstd.Encoder
	buf       *bufio.Writer
	enc       *json.Encoder
	n         int
	// dirSynced is set once the folder entry of a durable file is on disk.
	dirSynced bool
}

// Create starts a JSON-lines file at path, written in a temporary file
// until Close.
func Create(path string) (*Writer, error) {
	dir := filepath.Dir(path)
	f, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return nil, fmt.Errorf("create %s: %w", path, err)
	}
	w := &Writer{path: path, tmp: f.Name(), f: f}
	if err := w.init(); err != nil {
		f.Close()
		os.Remove(w.tmp)
		return nil, err
	}
	return w, nil
}

// CreateDurable starts a new JSON-lines file under its final name; it
// fails when the file exists. What Sync returned nil for is durable and
// readable even if the process or the machine stops before Close.
func CreateDurable(path string) (*Writer, error) {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return nil, fmt.Errorf("create %s: %w", path, err)
	}
	w := &Writer{path: path, f: f}
	if err := w.init(); err != nil {
		f.Close()
		os.Remove(path)
		return nil, err
	}
	return w, nil
}

func (w *Writer) init() error {
	var out io.Writer = w.f
	if strings.HasSuffix(w.path, ".zst") {
		z, err := zstd.NewWriter(w.f, zstd.WithEncoderLevel(zstd.SpeedBetterCompression))
		if err != nil {
			return err
		}
		w.z = z
		out = z
	}
	w.buf = bufio.NewWriterSize(out, 256<<10)
	w.enc = json.NewEncoder(w.buf)
	w.enc.SetEscapeHTML(false)
	return nil
}

// syncDir makes the folder entries of path (a new or renamed file) durable.
func syncDir(path string) error {
	d, err := os.Open(filepath.Dir(path))
	if err != nil {
		return err
	}
	err = d.Sync()
	if cerr := d.Close(); err == nil {
		err = cerr
	}
	return err
}

// Sync makes every line written so far durable: it flushes, ends the zstd
// frame (the next line starts a new one), syncs the file and, the first
// time for a durable writer, its folder.
func (w *Writer) Sync() error {
	if err := w.flush(); err != nil {
		return fmt.Errorf("write %s: %w", w.path, err)
	}
	if w.z != nil {
		w.z.Reset(w.f)
	}
	if err := w.f.Sync(); err != nil {
		return fmt.Errorf("sync %s: %w", w.path, err)
	}
	if w.tmp == "" && !w.dirSynced {
		if err := syncDir(w.path); err != nil {
			return fmt.Errorf("sync the folder of %s: %w", w.path, err)
		}
		w.dirSynced = true
	}
	return nil
}

// flush writes buffered lines and ends the current zstd frame.
func (w *Writer) flush() error {
	err := w.buf.Flush()
	if w.z != nil && err == nil {
		err = w.z.Close()
	}
	return err
}

// Write appends v as one line.
func (w *Writer) Write(v any) error {
	w.n++
	return w.enc.Encode(v)
}

// Count returns the lines written so far.
func (w *Writer) Count() int { return w.n }

// Close flushes and syncs the file and, for Create, moves it to its final
// name and syncs the folder. Only after Close returns nil is the export
// complete.
func (w *Writer) Close() error {
	err := w.flush()
	if err == nil {
		err = w.f.Sync()
	}
	if cerr := w.f.Close(); err == nil {
		err = cerr
	}
	if err == nil && w.tmp != "" {
		err = os.Rename(w.tmp, w.path)
	}
	if err == nil && (w.tmp != "" || !w.dirSynced) {
		err = syncDir(w.path)
	}
	if err != nil {
		if w.tmp != "" {
			os.Remove(w.tmp)
		}
		return fmt.Errorf("write %s: %w", w.path, err)
	}
	return nil
}

// Abort discards the file of a Create. A durable file is closed and kept:
// what was synced may describe records already deleted.
func (w *Writer) Abort() {
	w.flush()
	w.f.Close()
	if w.tmp != "" {
		os.Remove(w.tmp)
	}
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
