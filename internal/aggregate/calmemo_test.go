package aggregate

import (
	"bytes"
	"maps"
	"slices"
	"testing"

	"github.com/compactbench/compactbench/internal/analysis"
	"github.com/compactbench/compactbench/internal/tokens"
)

// mapMemo is a CalibrationMemo in memory that counts its loads and stores.
type mapMemo struct {
	m             map[string][]byte
	loads, stores int
}

func (m *mapMemo) Load(key string) ([]byte, bool) {
	m.loads++
	d, ok := m.m[key]
	return bytes.Clone(d), ok
}

func (m *mapMemo) Store(key string, data []byte) {
	m.stores++
	m.m[key] = bytes.Clone(data)
}

// memoRun is the calibration figures of samples computed through memo
// (nil: none) and how many refits that took.
func memoRun(t *testing.T, samples []tokens.Sample, models *tokens.Models, memo CalibrationMemo) ([]byte, int) {
	t.Helper()
	s := NewSummary(Meta{Models: models})
	if memo != nil {
		s.SetCalibrationMemo(memo)
	}
	for i := range samples {
		s.Add(&analysis.Result{Sample: &samples[i]})
	}
	s.Finish()
	if err := s.Rulers.Err(); err != nil {
		t.Fatal(err)
	}
	return mustJSON(t, s.Rulers.Calibration), s.Rulers.refits
}

// TestCalibrationMemo: a run over the samples of an earlier one takes the
// earlier figures from the memo without refitting, and they are those of
// a refit bit for bit; a changed sample, path (fold), generation or model
// table, or a damaged, foreign or non-canonical entry, is refitted and
// gives the figures of a run without a memo (the entry is then stored
// again).
func TestCalibrationMemo(t *testing.T) {
	defer func(m int) { spillMem = m }(spillMem)
	spillMem = 4096 // the samples go to their file, hashed on the way
	samples := randomSamples(11, 90)
	want, n := memoRun(t, samples, nil, nil)
	if n != 1 || string(want) == "null" {
		t.Fatalf("a run without a memo made %d refits, figures %s", n, want)
	}
	memo := &mapMemo{m: map[string][]byte{}}
	if got, n := memoRun(t, samples, nil, memo); n != 1 || string(got) != string(want) || memo.stores != 1 {
		t.Fatalf("first run: %d refits, %d stores, figures equal: %v", n, memo.stores, string(got) == string(want))
	}
	if got, n := memoRun(t, samples, nil, memo); n != 0 || string(got) != string(want) {
		t.Fatalf("second run: %d refits, figures equal: %v\n got %s\nwant %s", n, string(got) == string(want), got, want)
	}
	key := slices.Collect(maps.Keys(memo.m))[0]
	good := memo.m[key]

	clone := func() []tokens.Sample {
		out := slices.Clone(samples)
		for i := range out {
			out[i].Calls = slices.Clone(out[i].Calls)
		}
		return out
	}
	other, err := tokens.ParseModels([]byte("tokenizers:\n  claude-3: 1\n  claude-4.7: 1.2\n  o200k: 0.9\nmodels:\n  - pattern: \"*\"\n    tokenizer: claude-3\n    windows: [200000]\n    output: 64000\n"))
	if err != nil {
		t.Fatal(err)
	}
	changes := []struct {
		name    string
		samples func() []tokens.Sample
		models  *tokens.Models
	}{
		{"real context", func() []tokens.Sample { s := clone(); s[40].Calls[3].Real++; return s }, nil},
		{"quantity", func() []tokens.Sample { s := clone(); s[7].Calls[1].X[5] += 0.5; return s }, nil},
		{"flag", func() []tokens.Sample { s := clone(); s[60].Calls[2].Complete = !s[60].Calls[2].Complete; return s }, nil},
		{"path", func() []tokens.Sample { s := clone(); s[3].Path += ".moved"; return s }, nil},
		{"generation", func() []tokens.Sample { s := clone(); s[5].Gen = "o200k-x"; return s }, nil},
		{"order", func() []tokens.Sample { s := clone(); s[8], s[9] = s[9], s[8]; return s }, nil},
		{"one less", func() []tokens.Sample { return clone()[1:] }, nil},
		{"model table", clone, other},
	}
	for _, c := range changes {
		t.Run(c.name, func(t *testing.T) {
			smp := c.samples()
			want, _ := memoRun(t, smp, c.models, nil)
			before := memo.stores
			got, n := memoRun(t, smp, c.models, memo)
			if n != 1 || memo.stores != before+1 {
				t.Errorf("%d refits, %d stores: the changed input found the old entry", n, memo.stores-before)
			}
			if string(got) != string(want) {
				t.Errorf("figures differ from a run without a memo:\n got %s\nwant %s", got, want)
			}
		})
	}

	damaged := map[string][]byte{
		"empty":         {},
		"truncated":     good[:len(good)/2],
		"not json":      []byte("\x00\xffgarbage"),
		"other key":     bytes.Replace(good, []byte(key[:8]), []byte("00000000"), 1),
		"other format":  bytes.Replace(good, []byte(calMemoFormat), []byte(calMemoFormat+"x"), 1),
		"extra field":   append(bytes.TrimSuffix(bytes.Clone(good), []byte("}")), []byte(`,"x":1}`)...),
		"not canonical": append([]byte(" "), good...),
		"spaces":        bytes.ReplaceAll(good, []byte(":"), []byte(": ")),
	}
	for name, bad := range damaged {
		t.Run("damaged "+name, func(t *testing.T) {
			memo.m[key] = bad
			got, n := memoRun(t, samples, nil, memo)
			if n != 1 || string(got) != string(want) {
				t.Errorf("%d refits, figures equal: %v", n, string(got) == string(want))
			}
			if !bytes.Equal(memo.m[key], good) {
				t.Errorf("the entry was not stored again: %q", memo.m[key])
			}
		})
	}

	// Set after the first sample: ignored (the key would miss it).
	s := NewSummary(Meta{})
	s.Add(&analysis.Result{Sample: &samples[0]})
	late := &mapMemo{m: map[string][]byte{}}
	s.SetCalibrationMemo(late)
	for i := range samples[1:] {
		s.Add(&analysis.Result{Sample: &samples[i+1]})
	}
	s.Finish()
	if late.loads+late.stores != 0 || string(mustJSON(t, s.Rulers.Calibration)) != string(want) {
		t.Errorf("a memo set late was used (%d loads, %d stores) or the figures changed", late.loads, late.stores)
	}
}

// TestCalibrationMemoNothingToFit: samples without a step to fit on store
// and reuse null figures.
func TestCalibrationMemoNothingToFit(t *testing.T) {
	samples := []tokens.Sample{{Path: "a.jsonl", Calls: []tokens.SampleCall{{Real: 10, Anchor: true, Complete: true, Segment: 1}}}}
	memo := &mapMemo{m: map[string][]byte{}}
	for run, refits := range []int{1, 0} {
		got, n := memoRun(t, samples, nil, memo)
		if string(got) != "null" || n != refits {
			t.Errorf("run %d: figures %s, %d refits; want null, %d", run, got, n, refits)
		}
	}
}
