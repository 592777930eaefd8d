package tokens

import (
	"slices"
	"testing"

	"github.com/compactbench/compactbench/internal/transcript"
)

func TestRulerIDs(t *testing.T) {
	for i, name := range Names() {
		id, err := ParseRuler(name)
		if err != nil || id != RulerID(i) || id.Name() != name {
			t.Errorf("%s: id %d (%v), want %d", name, id, err, i)
		}
		if r := ByID(id, DefaultFactors()); r.ID() != id || r.Name() != name {
			t.Errorf("%s: ByID gave %s (%d)", name, r.Name(), r.ID())
		}
	}
	if _, err := ParseRuler("yardstick"); err == nil {
		t.Error("unknown ruler parsed")
	}
	if ByID(NoRuler, nil) != nil || NoRuler.Name() != "" {
		t.Error("NoRuler resolved")
	}
	ids, err := ParseIDs("calibrated,chars4,chars4")
	if err != nil || !slices.Equal(ids, []RulerID{RulerChars4, RulerCalibrated}) {
		t.Errorf("ParseIDs = %v %v", ids, err)
	}
}

func TestRulerSet(t *testing.T) {
	table, err := ParseModels([]byte(`tokenizers: {claude-3: 1, wide: 2}
models:
  - {pattern: "wide*", tokenizer: wide, windows: [1000]}
  - {pattern: "narrow*", tokenizer: claude-3, windows: [1000]}
`))
	if err != nil {
		t.Fatal(err)
	}
	ref := &Factors{Prose: 1}
	s, err := NewRulerSet(RulerSpec{Measured: []RulerID{RulerCalibrated, RulerChars4, RulerCalibrated}, Metric: RulerChars4Msg,
		Overhead: AnchorFirst, Calibration: &FactorSet{Generations: map[string]*Factors{GenClaude3: ref}}, Models: table})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(s.Measured(), []RulerID{RulerChars4, RulerCalibrated}) || s.Metric() != RulerChars4Msg || s.Overhead() != AnchorFirst {
		t.Errorf("set %v metric %v overhead %v", s.Measured(), s.Metric(), s.Overhead())
	}
	b := transcript.Block{Kind: transcript.BlockText, Text: "abcd"}
	for _, tc := range []struct {
		model, gen string
		calibrated int
	}{
		{"wide-1", "wide", 8},       // derived: the reference's factors × 2
		{"narrow-1", GenClaude3, 4}, // fitted
		{"unknown", GenClaude3, 4},  // no entry: the fallback model, the reference generation
	} {
		gr := s.ForModel(tc.model)
		if gr.Name != tc.gen {
			t.Errorf("%s: generation %s, want %s", tc.model, gr.Name, tc.gen)
		}
		if len(gr.Measured) != 2 || gr.Measured[0].ID() != RulerChars4 || gr.Measured[1] != gr.Ruler(RulerCalibrated) {
			t.Errorf("%s: measured %v", tc.model, gr.Measured)
		}
		if gr.Metric != gr.Ruler(RulerChars4Msg) {
			t.Errorf("%s: metric is not the generation's chars4msg", tc.model)
		}
		if got := gr.Ruler(RulerCalibrated).Uncached().Block(&b); got != tc.calibrated {
			t.Errorf("%s: calibrated counts %d, want %d", tc.model, got, tc.calibrated)
		}
	}
	if _, err := NewRulerSet(RulerSpec{Metric: NoRuler}); err == nil {
		t.Error("unregistered metric accepted")
	}
	if _, err := NewRulerSet(RulerSpec{Measured: []RulerID{RulerID(NumRulers)}}); err == nil {
		t.Error("unregistered ruler accepted")
	}
	d := DefaultRulerSet()
	if gr := d.ForModel("claude-opus-4-7"); gr.Name != GenClaude47 || gr.Metric.ID() != RulerCalibrated || len(gr.Measured) != len(DefaultNames()) {
		t.Errorf("default set: %s metric %s measured %d", gr.Name, gr.Metric.Name(), len(gr.Measured))
	}
}
