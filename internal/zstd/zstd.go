// Package zstd compresses archived payloads with Zstandard
// (github.com/klauspost/compress/zstd), shared by the store backends whose
// engines do not compress on their own.
package zstd

import (
	"fmt"

	"github.com/klauspost/compress/zstd"
)

// The encoder and decoder are safe for concurrent EncodeAll/DecodeAll and
// expensive to create, so one of each serves the process.
var (
	enc, _ = zstd.NewWriter(nil, zstd.WithEncoderLevel(zstd.SpeedDefault), zstd.WithEncoderConcurrency(1))
	dec, _ = zstd.NewReader(nil, zstd.WithDecoderConcurrency(0), zstd.WithDecoderMaxMemory(256<<20))
)

// Compress returns src compressed, appended to dst.
func Compress(dst, src []byte) []byte { return enc.EncodeAll(src, dst) }

// Decompress returns src decompressed, appended to dst.
func Decompress(dst, src []byte) ([]byte, error) {
	out, err := dec.DecodeAll(src, dst)
	if err != nil {
		return nil, fmt.Errorf("decompress archived payload: %w", err)
	}
	return out, nil
}
