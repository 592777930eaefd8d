package compaction

import (
	"fmt"
	"testing"
)

// TestMaskPlaceholderMatchesSprintf checks that mask's placeholder, put
// together from halves when its only verb is one %d, is what formatting it
// gives, for the default and for formats it must leave to fmt.
func TestMaskPlaceholderMatchesSprintf(t *testing.T) {
	for _, format := range []string{
		"Old environment output: (%d lines omitted)", "%d", "%d lines", "lines: %d", "",
		"no verb", "100%% of %d lines", "%d of %d", "%s lines", "%5d lines", "%v", "ends with %",
	} {
		m := &mask{p: MaskParams{Keep: 1, Placeholder: format}}
		for _, n := range []int{0, 1, 7, 12345} {
			if got, want := m.placeholder(n), fmt.Sprintf(format, n); got != want {
				t.Errorf("%q with %d: %q, fmt gives %q", format, n, got, want)
			}
		}
	}
}
