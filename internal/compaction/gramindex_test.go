package compaction

import (
	"math/rand/v2"
	"strings"
	"testing"
)

// TestGramIndexContains: gramIndex.contains answers as strings.Contains, for
// needles cut from the text (present, at every length around the
// substring length and the probe count), changed in one byte (mostly
// absent), and for texts of every size class (the index grows).
func TestGramIndexContains(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	alphabets := []string{"ab", "abcdefgh \n", "abcdefghijklmnopqrstuvwxyz0123456789 ./_-\n"}
	var g gramIndex
	for _, size := range []int{0, 1, 3, 4, 5, 17, 200, 5000, 70_000} {
		for _, alpha := range alphabets {
			text := randText(rng, alpha, size)
			g.reset(text)
			for range 300 {
				n := rng.IntN(80)
				var needle string
				if size > 0 {
					i := rng.IntN(size)
					needle = text[i:min(size, i+n)]
				}
				if needle != "" && rng.IntN(2) == 0 {
					b := []byte(needle)
					b[rng.IntN(len(b))] = alpha[rng.IntN(len(alpha))]
					needle = string(b)
				}
				if rng.IntN(8) == 0 {
					needle = randText(rng, alpha, n)
				}
				if got, want := g.contains(needle), strings.Contains(text, needle); got != want {
					t.Fatalf("size %d: contains(%q) = %v, strings.Contains = %v", size, needle, got, want)
				}
			}
		}
	}
}

func randText(rng *rand.Rand, alpha string, n int) string {
	b := make([]byte, n)
	for i := range b {
		b[i] = alpha[rng.IntN(len(alpha))]
	}
	return string(b)
}

// FuzzGramIndex: gramIndex.contains is strings.Contains, whatever the bytes,
// including after a reset from a longer text (the arrays are reused).
func FuzzGramIndex(f *testing.F) {
	f.Add("error: cannot find module\nline two", "cannot find", "a much longer text than the other one, to grow the bits")
	f.Add("", "", "x")
	f.Add("abc", "abcd", "")
	f.Fuzz(func(t *testing.T, text, needle, other string) {
		var g gramIndex
		g.reset(other)
		g.reset(text)
		if got, want := g.contains(needle), strings.Contains(text, needle); got != want {
			t.Fatalf("contains(%q) in %q = %v, strings.Contains = %v", needle, text, got, want)
		}
		if i := len(text) / 3; i < len(text) {
			sub := text[i : i+min(len(text)-i, len(needle)+5)]
			if !g.contains(sub) {
				t.Fatalf("contains(%q) in %q = false for a substring", sub, text)
			}
		}
	})
}
