package tokens

import (
	"encoding/json"
	"math"
	"testing"

	"github.com/compactbench/compactbench/internal/transcript"
)

// countingCounter counts how often blocks are counted.
type countingCounter struct{ calls *int }

func (c countingCounter) block(b *transcript.Block) int { *c.calls++; return len(b.Text) }
func (c countingCounter) message() int                  { return 1 }

func TestRulerCachesPerBlock(t *testing.T) {
	n := 0
	r := &Ruler{name: "test", slot: 7, c: countingCounter{&n}}
	msgs := []transcript.Message{
		{Blocks: []transcript.Block{{Kind: transcript.BlockText, Text: "abc"}, {Kind: transcript.BlockText, Text: "de"}}},
		{Blocks: []transcript.Block{{Kind: transcript.BlockText, Text: "f"}}},
	}
	for i := 0; i < 5; i++ { // five strategies replaying the same context
		if got := r.Context(msgs); got != 2+6 {
			t.Fatalf("context = %d, want 8", got)
		}
	}
	if n != 3 {
		t.Errorf("counted blocks %d times, want 3 (once per block)", n)
	}
	// A zero-token block is cached too (stored as n+1).
	empty := transcript.Block{Kind: transcript.BlockText}
	r.Block(&empty)
	r.Block(&empty)
	if n != 4 {
		t.Errorf("empty block counted %d times in total, want once", n-3)
	}
	// Text never caches; Uncached never reads the cache.
	r.Text("xyz")
	r.Text("xyz")
	r.Uncached().Block(&msgs[0].Blocks[0])
	if n != 7 {
		t.Errorf("Text/Uncached counted %d times, want 3", n-4)
	}
	// Rulers in different slots do not see each other's counts.
	c4, _ := ByName(Chars4)
	if got := c4.Block(&msgs[0].Blocks[0]); got != 1 {
		t.Errorf("chars4 read another ruler's cache: %d", got)
	}
}

func TestRegistry(t *testing.T) {
	slots := map[int]string{}
	for _, name := range Names() {
		r, err := ByName(name)
		if err != nil {
			t.Fatal(err)
		}
		if r.Name() != name {
			t.Errorf("ByName(%q).Name() = %q", name, r.Name())
		}
		if other, dup := slots[r.Slot()]; dup || r.Slot() < 0 || r.Slot() >= transcript.TokenSlots {
			t.Errorf("ruler %s slot %d (shared with %q)", name, r.Slot(), other)
		}
		slots[r.Slot()] = name
	}
	if _, err := ByName("nope"); err == nil {
		t.Error("ByName accepted an unknown ruler")
	}
	for _, tc := range []struct {
		in   string
		want []string
		bad  bool
	}{
		{"calibrated,chars4", []string{Chars4, Calibrated}, false},
		{"all", Names(), false},
		{"default", DefaultNames(), false},
		{"chars4, chars4 ,o200k", []string{Chars4, O200k}, false},
		{"", nil, true},
		{"chars5", nil, true},
	} {
		got, err := ParseNames(tc.in)
		if (err != nil) != tc.bad {
			t.Errorf("ParseNames(%q) error = %v", tc.in, err)
			continue
		}
		if len(got) != len(tc.want) {
			t.Errorf("ParseNames(%q) = %v, want %v", tc.in, got, tc.want)
			continue
		}
		for i := range got {
			if got[i] != tc.want[i] {
				t.Errorf("ParseNames(%q) = %v, want %v", tc.in, got, tc.want)
			}
		}
	}
}

func TestQuantile(t *testing.T) {
	xs := []float64{5, 1, 3, 2, 4}
	for _, tc := range []struct{ p, want float64 }{{0, 1}, {0.5, 3}, {1, 5}, {0.95, 4.8}, {0.25, 2}} {
		if got := Quantile(xs, tc.p); got != tc.want {
			t.Errorf("Quantile(%v) = %v, want %v", tc.p, got, tc.want)
		}
	}
	s := AbsErrStats([]float64{-0.1, 0.2, -0.3, 0.05})
	if s.N != 4 || s.Median != 0.15000000000000002 && s.Median != 0.15 {
		t.Errorf("AbsErrStats = %+v", s)
	}
}

func TestErrStatsJSON(t *testing.T) {
	data, err := json.Marshal(AbsErrStats(nil))
	if err != nil {
		t.Fatal(err)
	}
	if string(data) != `{"n":0,"median_abs_err":null,"p95_abs_err":null}` {
		t.Errorf("empty stats = %s", data)
	}
	var back ErrStats
	if err := json.Unmarshal([]byte(`{"n":2,"median_abs_err":0.5,"p95_abs_err":null}`), &back); err != nil {
		t.Fatal(err)
	}
	if back.N != 2 || back.Median != 0.5 || !math.IsNaN(back.P95) {
		t.Errorf("decoded %+v", back)
	}
}
