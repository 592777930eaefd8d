package aggregate

import (
	"testing"
)

func TestFamily(t *testing.T) {
	for in, want := range map[string]string{
		"claude-opus-4-5-20251101": "claude-opus-4-5",
		"claude-opus-4-20250514":   "claude-opus-4",
		"claude-opus-5":            "claude-opus-5",
		"gpt-4o-2024-08-06":        "gpt-4o-2024-08-06",
		"gpt-5.4":                  "gpt-5.4",
		"model-abcdefgh":           "model-abcdefgh",
		"":                         "(none)",
	} {
		if got := family(in); got != want {
			t.Errorf("family(%q) = %q, want %q", in, got, want)
		}
	}
}
