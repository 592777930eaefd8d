package aggregate

import (
	"testing"
)

// FuzzParseTolerances: any tolerances file either fails with an error or
// parses, never panics.
func FuzzParseTolerances(f *testing.F) {
	f.Add([]byte("need_recall: 0.03\nevidence_f1: off\nstrategies:\n  mask: {low_compression_share: off, overflows: 2}\n"))
	f.Add([]byte("problems: -1\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		ParseTolerances(data, "f.yaml")
	})
}
