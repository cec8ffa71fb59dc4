// Package zstd compresses archived payloads with Zstandard
// (github.com/klauspost/compress/zstd), shared by the store backends whose
// engines do not compress on their own.
package zstd

import (
	"bytes"
	"fmt"

	"github.com/klauspost/compress/zstd"
)

// The encoder and decoder are safe for concurrent EncodeAll/DecodeAll and
// expensive to create, so one of each serves the process.
var (
	enc, _ = zstd.NewWriter(nil, zstd.WithEncoderLevel(zstd.SpeedDefault), zstd.WithEncoderConcurrency(1))
	dec, _ = zstd.NewReader(nil, zstd.WithDecoderConcurrency(0), zstd.WithDecoderMaxMemory(256<<20))
)

// magic starts every Zstandard frame. Payloads are JSON, which never
// starts with these bytes, so a payload that compression would not shrink
// is stored as is and told apart by its first byte.
var magic = []byte{0x28, 0xb5, 0x2f, 0xfd}

// Compress returns src compressed, appended to dst; when compression would
// not make it smaller, src itself is appended.
func Compress(dst, src []byte) []byte {
	n := len(dst)
	out := enc.EncodeAll(src, dst)
	if len(out)-n >= len(src) {
		return append(out[:n], src...)
	}
	return out
}

// Decompress returns src decompressed (or as is, when it was stored
// uncompressed), appended to dst.
func Decompress(dst, src []byte) ([]byte, error) {
	if !bytes.HasPrefix(src, magic) {
		return append(dst, src...), nil
	}
	out, err := dec.DecodeAll(src, dst)
	if err != nil {
		return nil, fmt.Errorf("decompress archived payload: %w", err)
	}
	return out, nil
}
