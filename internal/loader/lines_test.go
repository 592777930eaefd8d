package loader

import (
	"bytes"
	"fmt"
	"hash/crc32"
	"strings"
	"testing"
)

// TestEachLineLong reads lines around the read buffer's size and past
// maxLongKept (kept in pieces then), each twice in a row, and checks that
// every line comes out whole, in order, with its number, whichever way it
// was assembled; and that a line past MaxLine is skipped, not handed out.
func TestEachLineLong(t *testing.T) {
	sizes := []int{0, 10, 64<<10 - 1, 64 << 10, 64<<10 + 1, 200 << 10, maxLongKept - 1, maxLongKept, maxLongKept + 70<<10, 3 << 20, 5}
	var in bytes.Buffer
	var want []string
	for i, n := range sizes {
		for range 2 {
			line := strings.Repeat(string(rune('a'+i)), n)
			in.WriteString(line + "\n")
			want = append(want, fmt.Sprintf("%d:%08x", n, crc32.ChecksumIEEE([]byte(line))))
		}
	}
	in.WriteString("last, no newline")
	want = append(want, fmt.Sprintf("%d:%08x", 16, crc32.ChecksumIEEE([]byte("last, no newline"))))

	tests := []struct {
		name    string
		maxLine int
		skipped int // lines over maxLine
	}{
		{"default limits", 0, 0},
		{"limit 4 MiB", 4 << 20, 6},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			src := &Source{Path: "long.jsonl", R: bytes.NewReader(in.Bytes()), lim: Limits{MaxLine: tt.maxLine}}
			var got []string
			n, err := eachLine(src, func(n int, line []byte, final bool) {
				if final != (n == len(want)) {
					t.Errorf("line %d: final = %v", n, final)
				}
				got = append(got, fmt.Sprintf("%d:%08x", len(line), crc32.ChecksumIEEE(line)))
			})
			if err != nil || n != len(want) {
				t.Fatalf("eachLine = %d, %v; want %d lines", n, err, len(want))
			}
			if len(src.lost) != tt.skipped {
				t.Fatalf("%d lines skipped, want %d: %+v", len(src.lost), tt.skipped, src.lost)
			}
			var kept []string
			for _, w := range want {
				var size int
				fmt.Sscanf(w, "%d:", &size)
				if tt.maxLine == 0 || size <= tt.maxLine {
					kept = append(kept, w)
				}
			}
			if strings.Join(got, " ") != strings.Join(kept, " ") {
				t.Errorf("lines (length:crc)\n got %v\nwant %v", got, kept)
			}
		})
	}
}
