package loader

import (
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"io"
	"strings"

	"github.com/compactbench/compactbench/internal/transcript"
)

// imageHeadLimit bounds how much of an image's decoded data is read to find
// its dimensions (a JPEG's frame header may follow large metadata).
const imageHeadLimit = 1 << 20

// imageDims reads the width and height of a PNG, JPEG, GIF or WebP image
// from its base64 data, decoding only as much as the header needs.
func imageDims(b64 string) (w, h int, ok bool) {
	if b64 == "" {
		return 0, 0, false
	}
	return imageDimsOf(strings.NewReader(b64))
}

// imageDimsOf is imageDims reading the base64 data from b64.
func imageDimsOf(b64 io.Reader) (w, h int, ok bool) {
	r := io.LimitReader(base64.NewDecoder(base64.StdEncoding, b64), imageHeadLimit)
	head := make([]byte, 32)
	n, _ := io.ReadFull(r, head)
	head = head[:n]
	switch {
	case n >= 24 && string(head[:8]) == "\x89PNG\r\n\x1a\n" && string(head[12:16]) == "IHDR":
		return int(binary.BigEndian.Uint32(head[16:20])), int(binary.BigEndian.Uint32(head[20:24])), true
	case n >= 10 && (string(head[:6]) == "GIF87a" || string(head[:6]) == "GIF89a"):
		return int(binary.LittleEndian.Uint16(head[6:8])), int(binary.LittleEndian.Uint16(head[8:10])), true
	case n >= 30 && string(head[:4]) == "RIFF" && string(head[8:12]) == "WEBP":
		return webpSize(head)
	case n >= 4 && head[0] == 0xFF && head[1] == 0xD8:
		return jpegSize(io.MultiReader(strings.NewReader(string(head[2:])), r))
	}
	return 0, 0, false
}

// webpSize reads a WebP header (its first 30 bytes): lossy (VP8), lossless
// (VP8L) or extended (VP8X).
func webpSize(b []byte) (int, int, bool) {
	switch string(b[12:16]) {
	case "VP8 ":
		if b[23] != 0x9d || b[24] != 0x01 || b[25] != 0x2a {
			return 0, 0, false
		}
		return int(binary.LittleEndian.Uint16(b[26:28]) & 0x3fff), int(binary.LittleEndian.Uint16(b[28:30]) & 0x3fff), true
	case "VP8L":
		if b[20] != 0x2f {
			return 0, 0, false
		}
		bits := binary.LittleEndian.Uint32(b[21:25])
		return int(bits&0x3fff) + 1, int(bits>>14&0x3fff) + 1, true
	case "VP8X":
		w := int(b[24]) | int(b[25])<<8 | int(b[26])<<16
		h := int(b[27]) | int(b[28])<<8 | int(b[29])<<16
		return w + 1, h + 1, true
	}
	return 0, 0, false
}

// jpegSize walks a JPEG's marker segments (after SOI) to its frame header.
func jpegSize(r io.Reader) (int, int, bool) {
	var m [4]byte
	for {
		if _, err := io.ReadFull(r, m[:2]); err != nil {
			return 0, 0, false
		}
		if m[0] != 0xFF {
			return 0, 0, false
		}
		marker := m[1]
		if marker == 0xFF { // fill byte: the marker follows
			m[0] = 0xFF
			for marker == 0xFF {
				if _, err := io.ReadFull(r, m[1:2]); err != nil {
					return 0, 0, false
				}
				marker = m[1]
			}
		}
		if marker == 0x01 || (marker >= 0xD0 && marker <= 0xD7) {
			continue // markers without a length
		}
		if _, err := io.ReadFull(r, m[2:4]); err != nil {
			return 0, 0, false
		}
		length := int(binary.BigEndian.Uint16(m[2:4]))
		if length < 2 {
			return 0, 0, false
		}
		isSOF := marker >= 0xC0 && marker <= 0xCF && marker != 0xC4 && marker != 0xC8 && marker != 0xCC
		if isSOF {
			var f [5]byte
			if length < 7 {
				return 0, 0, false
			}
			if _, err := io.ReadFull(r, f[:]); err != nil {
				return 0, 0, false
			}
			return int(binary.BigEndian.Uint16(f[3:5])), int(binary.BigEndian.Uint16(f[1:3])), true
		}
		if _, err := io.CopyN(io.Discard, r, int64(length-2)); err != nil {
			return 0, 0, false
		}
	}
}

// sizeImageBytes adds one image's dimensions, when its base64 data has
// them, to b.
func sizeImageBytes(b *transcript.Block, b64 []byte) {
	if len(b64) == 0 {
		return
	}
	if w, h, ok := imageDimsOf(bytes.NewReader(b64)); ok {
		addImageSize(b, w, h)
	}
}

// addImageSize adds one w×h image, when both are positive, to b's sized
// images, pixels and image tokens.
func addImageSize(b *transcript.Block, w, h int) {
	if w <= 0 || h <= 0 {
		return
	}
	b.SizedImages++
	b.ImagePixels += transcript.ScaledImagePixels(w, h)
	b.ImageTokens += transcript.ImageTokens(w, h)
}
