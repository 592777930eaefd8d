package loader

import (
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"image"
	"image/color"
	"image/gif"
	"image/jpeg"
	"image/png"
	"testing"

	"github.com/compactbench/compactbench/internal/transcript"
)

// TestImageDims encodes real images of each format at run time and reads
// their dimensions back from the base64 text.
func TestImageDims(t *testing.T) {
	img := image.NewRGBA(image.Rect(0, 0, 1920, 1080))
	enc := func(f func(*bytes.Buffer) error) string {
		var buf bytes.Buffer
		if err := f(&buf); err != nil {
			t.Fatal(err)
		}
		return base64.StdEncoding.EncodeToString(buf.Bytes())
	}
	// A JPEG whose frame header follows a large APP segment.
	jpg := enc(func(b *bytes.Buffer) error { return jpeg.Encode(b, img, nil) })
	raw, _ := base64.StdEncoding.DecodeString(jpg)
	app := append([]byte{0xFF, 0xE1, 0xFF, 0xFF}, make([]byte, 0xFFFD)...)
	bigJPG := base64.StdEncoding.EncodeToString(append(append(raw[:2:2], app...), raw[2:]...))
	// WebP headers, lossy / lossless / extended.
	vp8 := []byte("RIFF\x00\x00\x00\x00WEBPVP8 \x00\x00\x00\x00\x00\x00\x00\x9d\x01\x2a")
	vp8 = binary.LittleEndian.AppendUint16(vp8, 800)
	vp8 = binary.LittleEndian.AppendUint16(vp8, 600)
	vp8l := []byte("RIFF\x00\x00\x00\x00WEBPVP8L\x00\x00\x00\x00\x2f")
	vp8l = binary.LittleEndian.AppendUint32(vp8l, uint32(640-1)|uint32(480-1)<<14)
	vp8l = append(vp8l, 0, 0, 0, 0, 0)
	vp8x := []byte("RIFF\x00\x00\x00\x00WEBPVP8X\x00\x00\x00\x00\x00\x00\x00\x00")
	vp8x = append(vp8x, byte(2999&0xff), byte(2999>>8), 0, byte(1999&0xff), byte(1999>>8), 0)
	b64 := base64.StdEncoding.EncodeToString
	tests := []struct {
		name string
		data string
		w, h int
		ok   bool
	}{
		{"png", enc(func(b *bytes.Buffer) error { return png.Encode(b, img) }), 1920, 1080, true},
		{"jpeg", jpg, 1920, 1080, true},
		{"jpeg after a 64 KiB segment", bigJPG, 1920, 1080, true},
		{"gif", enc(func(b *bytes.Buffer) error {
			return gif.Encode(b, image.NewPaletted(image.Rect(0, 0, 320, 200), color.Palette{color.Black}), nil)
		}), 320, 200, true},
		{"webp lossy", b64(vp8), 800, 600, true},
		{"webp lossless", b64(vp8l), 640, 480, true},
		{"webp extended", b64(vp8x), 3000, 2000, true},
		{"not an image", b64([]byte("hello, world, this is text.....")), 0, 0, false},
		{"truncated png", b64([]byte("\x89PNG\r\n\x1a\n")), 0, 0, false},
		{"empty", "", 0, 0, false},
	}
	for _, tt := range tests {
		w, h, ok := imageDims(tt.data)
		if w != tt.w || h != tt.h || ok != tt.ok {
			t.Errorf("%s: got %dx%d %v, want %dx%d %v", tt.name, w, h, ok, tt.w, tt.h, tt.ok)
		}
	}
}

// TestImageTokens checks the API's pixel rule: the long edge is scaled to
// at most 1568 px, then about one token per 750 pixels.
func TestImageTokens(t *testing.T) {
	tests := []struct {
		w, h   int
		pixels int64
		tokens int
	}{
		{1000, 1000, 1_000_000, 1334},
		{1920, 1080, 1568 * 882, 1844},
		{200, 100, 20_000, 27},
		{0, 100, 0, 0},
	}
	for _, tt := range tests {
		if p := transcript.ScaledImagePixels(tt.w, tt.h); p != tt.pixels {
			t.Errorf("ScaledImagePixels(%d,%d) = %d, want %d", tt.w, tt.h, p, tt.pixels)
		}
		if n := transcript.ImageTokens(tt.w, tt.h); n != tt.tokens {
			t.Errorf("ImageTokens(%d,%d) = %d, want %d", tt.w, tt.h, n, tt.tokens)
		}
	}
}
