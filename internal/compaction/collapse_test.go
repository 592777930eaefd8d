package compaction

import "testing"

var collapseCases = []string{"", " ", "a", "  a  b\t\nc  ", "x\u00a0y\u2003z\u0085w", "\xff \xfe\x80 a", "é  ü\r\n\v\f", "\u3000lead and trail\u3000"}

// TestAppendCollapsed: appendCollapsed is collapseSpace, appended after
// what the buffer holds.
func TestAppendCollapsed(t *testing.T) {
	for _, s := range collapseCases {
		checkCollapsed(t, s)
	}
}

func checkCollapsed(t *testing.T, s string) {
	t.Helper()
	if got, want := string(appendCollapsed(nil, s)), collapseSpace(s); got != want {
		t.Fatalf("appendCollapsed(%q) = %q, collapseSpace = %q", s, got, want)
	}
	if got, want := string(appendCollapsed([]byte("pre "), s)), "pre "+collapseSpace(s); got != want {
		t.Fatalf("appendCollapsed after a prefix (%q) = %q, want %q", s, got, want)
	}
}

// FuzzAppendCollapsed: appendCollapsed is collapseSpace on any bytes.
func FuzzAppendCollapsed(f *testing.F) {
	for _, s := range collapseCases {
		f.Add(s)
	}
	f.Fuzz(checkCollapsed)
}
