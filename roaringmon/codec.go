package roaringmon

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/RoaringBitmap/roaring/v2"
)

// enc appends the binary forms of log entries and snapshot parts: unsigned
// and signed varints, length-prefixed strings and serialized bitmaps.
type enc struct{ b []byte }

func (e *enc) u(v uint64)   { e.b = binary.AppendUvarint(e.b, v) }
func (e *enc) i(v int64)    { e.b = binary.AppendVarint(e.b, v) }
func (e *enc) byte(v byte)  { e.b = append(e.b, v) }
func (e *enc) str(s string) { e.u(uint64(len(s))); e.b = append(e.b, s...) }
func (e *enc) bool(v bool) {
	if v {
		e.byte(1)
	} else {
		e.byte(0)
	}
}

// bitmap writes bm in roaring's portable format, run-optimised first so
// that ranges of consecutive ids (a round queued or done in dictionary
// order) take a few bytes.
func (e *enc) bitmap(bm *roaring.Bitmap) {
	bm.RunOptimize()
	n := bm.GetSerializedSizeInBytes()
	e.u(n)
	start := len(e.b)
	e.b = append(e.b, make([]byte, n)...)
	if _, err := bm.WriteTo(&sliceWriter{b: e.b[start:start]}); err != nil {
		panic(err) // writing to memory cannot fail
	}
}

type sliceWriter struct{ b []byte }

func (w *sliceWriter) Write(p []byte) (int, error) {
	w.b = append(w.b, p...)
	return len(p), nil
}

var errCorrupt = errors.New("corrupt monitor data")

// dec reads what enc wrote; the first error sticks and every later read
// returns zero values.
type dec struct {
	b   []byte
	err error
}

func (d *dec) fail(what string) {
	if d.err == nil {
		d.err = fmt.Errorf("%w: bad %s", errCorrupt, what)
	}
}

func (d *dec) more() bool { return d.err == nil && len(d.b) > 0 }

func (d *dec) u() uint64 {
	if d.err != nil {
		return 0
	}
	v, n := binary.Uvarint(d.b)
	if n <= 0 {
		d.fail("number")
		return 0
	}
	d.b = d.b[n:]
	return v
}

func (d *dec) i() int64 {
	if d.err != nil {
		return 0
	}
	v, n := binary.Varint(d.b)
	if n <= 0 {
		d.fail("number")
		return 0
	}
	d.b = d.b[n:]
	return v
}

func (d *dec) byte() byte {
	if d.err != nil || len(d.b) == 0 {
		d.fail("byte")
		return 0
	}
	v := d.b[0]
	d.b = d.b[1:]
	return v
}

func (d *dec) bool() bool { return d.byte() == 1 }

func (d *dec) raw() []byte {
	n := d.u()
	if d.err != nil || n > uint64(len(d.b)) {
		d.fail("length")
		return nil
	}
	v := d.b[:n]
	d.b = d.b[n:]
	return v
}

func (d *dec) str() string { return string(d.raw()) }

func (d *dec) bitmap() *roaring.Bitmap {
	raw := d.raw()
	bm := roaring.New()
	if d.err != nil {
		return bm
	}
	// UnmarshalBinary copies, so the bitmap does not alias the row buffer
	// the database driver may reuse.
	if err := bm.UnmarshalBinary(raw); err != nil {
		d.fail("bitmap")
	}
	return bm
}
