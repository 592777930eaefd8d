package anchors

import (
	"bytes"
	"strings"
	"testing"
)

func TestWithThreshold(t *testing.T) {
	base, err := Builtin("fspec")
	if err != nil {
		t.Fatal(err)
	}
	low, err := base.WithThreshold(0.75)
	if err != nil {
		t.Fatal(err)
	}
	if low.Threshold != 0.75 || base.Threshold != 0.9 {
		t.Fatalf("thresholds %v (copy) and %v (original)", low.Threshold, base.Threshold)
	}
	if low.Hash() == base.Hash() || low.Name != base.Name || len(low.Rules) != len(base.Rules) {
		t.Errorf("copy: hash %s name %s rules %d", low.Hash(), low.Name, len(low.Rules))
	}
	if !strings.Contains(low.Origin, "threshold 0.75") {
		t.Errorf("origin %q", low.Origin)
	}
	// Only the number changed: comments and every other byte are kept.
	if want := bytes.Replace(base.Source, []byte("\nthreshold: 0.9\n"), []byte("\nthreshold: 0.75\n"), 1); !bytes.Equal(low.Source, want) {
		t.Errorf("source changed beyond the threshold:\n%s", low.Source)
	}
	// Rules below the old threshold fire at the new one.
	below := 0
	for _, r := range low.Rules {
		if r.BelowThreshold(low) {
			below++
		}
	}
	if below >= countBelow(base) {
		t.Errorf("%d rules below 0.75, %d below 0.9", below, countBelow(base))
	}
	one, err := base.WithThreshold(1)
	if err != nil || one.Threshold != 1 || !bytes.Contains(one.Source, []byte("\nthreshold: 1.0\n")) {
		t.Errorf("threshold 1: %v %v", one, err)
	}
	for _, bad := range []float64{-0.1, 1.5} {
		if _, err := base.WithThreshold(bad); err == nil {
			t.Errorf("threshold %v accepted", bad)
		}
	}
}

// TestWithThresholdUnusualSpelling: a threshold written with an explicit
// tag is re-encoded rather than edited in place.
func TestWithThresholdUnusualSpelling(t *testing.T) {
	src := "name: x\nthreshold: !!float 0.9\nrules:\n  - name: r\n    type: task-completion\n    weight: 0.8\n    confidence: 0.8\n    when:\n      - user: {contains: done, case: insensitive}\n"
	s, err := Parse([]byte(src), "x.yaml")
	if err != nil {
		t.Fatal(err)
	}
	c, err := s.WithThreshold(0.5)
	if err != nil || c.Threshold != 0.5 || len(c.Rules) != 1 {
		t.Fatalf("%+v %v", c, err)
	}
}

func countBelow(s *RuleSet) int {
	n := 0
	for _, r := range s.Rules {
		if r.BelowThreshold(s) {
			n++
		}
	}
	return n
}
