package report

import (
	"bytes"
	"math/rand/v2"
	"sync"
	"testing"

	pqzstd "github.com/parquet-go/parquet-go/compress/zstd"
)

// TestZstdCodecMatchesLibrary: every page zstdCodec compresses is the bytes
// the Parquet library's own codec at the same level gives, from one
// goroutine or many at once, small pages and pages of several zstd blocks,
// and decodes back.
func TestZstdCodecMatchesLibrary(t *testing.T) {
	lib := &pqzstd.Codec{Level: pqzstd.SpeedFastest}
	rng := rand.New(rand.NewPCG(5, 6))
	var pages [][]byte
	for _, n := range []int{0, 1, 7, 100, 4096, 32 << 10, 128 << 10, 128<<10 + 1, 300 << 10, 1 << 20} {
		random := make([]byte, n)
		for i := range random {
			random[i] = byte(rng.IntN(256))
		}
		text := make([]byte, n)
		for i := range text {
			text[i] = "call,tool_use,0.125,claude-opus-4-5\n"[(i*7+rng.IntN(3))%36]
		}
		pages = append(pages, random, text, bytes.Repeat([]byte{0}, n))
	}
	want := make([][]byte, len(pages))
	for i, p := range pages {
		w, err := lib.Encode(nil, p)
		if err != nil {
			t.Fatal(err)
		}
		want[i] = w
	}
	check := func(i int, dst []byte) {
		got, err := pqZstd.Encode(dst, pages[i])
		if err != nil {
			t.Error(err)
			return
		}
		if !bytes.Equal(got, want[i]) {
			t.Errorf("page %d (%d bytes): %d bytes compressed, the library's codec gives %d", i, len(pages[i]), len(got), len(want[i]))
		}
		if back, err := pqZstd.Decode(nil, got); err != nil || !bytes.Equal(back, pages[i]) {
			t.Errorf("page %d does not decode back: %v", i, err)
		}
	}
	for i := range pages {
		check(i, make([]byte, 3, 64)) // dst's bytes are replaced, not appended to
	}
	var wg sync.WaitGroup
	for g := range 12 {
		wg.Go(func() {
			for k := range pages {
				check((k+g)%len(pages), nil)
			}
		})
	}
	wg.Wait()
	if pqZstd.String() != lib.String() || pqZstd.CompressionCodec() != lib.CompressionCodec() {
		t.Errorf("codec %s/%v, the library's %s/%v", pqZstd.String(), pqZstd.CompressionCodec(), lib.String(), lib.CompressionCodec())
	}
}
