package compaction

import (
	"path/filepath"
	"testing"

	"github.com/compactbench/compactbench/internal/loader"
	"github.com/compactbench/compactbench/internal/testutil"
	"github.com/compactbench/compactbench/internal/transcript"
)

// checkingStrategy wraps a strategy and, before each of its decisions,
// compares the figures the Sim and mask keep up to date between calls with
// the same figures counted from scratch.
type checkingStrategy struct {
	Strategy
	t      *testing.T
	checks *int
}

func (c *checkingStrategy) Trigger(s *Sim) (bool, int) {
	c.check(s)
	return c.Strategy.Trigger(s)
}

func (c *checkingStrategy) check(s *Sim) {
	c.t.Helper()
	*c.checks++
	// CacheRead from the running sums == the cached prefix added up.
	if s.Call > 0 {
		want := s.Overhead
		for i := 0; i < s.stable; i++ {
			want += s.ItemTokens(i)
		}
		if got := s.CacheRead(); got != want {
			c.t.Fatalf("%s call %d: CacheRead %d, counted %d", s.T.Path, s.Call, got, want)
		}
	}
	// The context's total, running sums and last prompt (which replace
	// copies for the unchanged start of a compacted context) == a recount.
	wantLast, total, cum, cumThink := -1, 0, 0, 0
	for i := range s.Ctx {
		if s.strip && s.isPrompt(&s.Ctx[i]) {
			wantLast = i
		}
		cum += s.tok[i]
		cumThink += s.think[i]
		if s.cumTok[i] != cum || s.cumThink[i] != cumThink {
			c.t.Fatalf("%s call %d: running sums at %d are %d/%d, counted %d/%d", s.T.Path, s.Call, i, s.cumTok[i], s.cumThink[i], cum, cumThink)
		}
	}
	if s.lastPrompt != wantLast {
		c.t.Fatalf("%s call %d: last prompt %d, counted %d", s.T.Path, s.Call, s.lastPrompt, wantLast)
	}
	for i := range s.Ctx {
		total += s.ItemTokens(i)
	}
	if s.Tokens() != total {
		c.t.Fatalf("%s call %d: context total %d, counted %d", s.T.Path, s.Call, s.Tokens(), total)
	}
	// mask's unmasked observations, kept between calls == a fresh scan.
	if m, ok := c.Strategy.(*mask); ok {
		var want [][2]int
		for i := range s.Ctx {
			for j := range s.Ctx[i].Msg.Blocks {
				if s.Ctx[i].Msg.Blocks[j].Kind == transcript.BlockToolResult && !isMasked(&s.Ctx[i], j) {
					want = append(want, [2]int{i, j})
				}
			}
		}
		got := m.scan(s)
		if len(got) != len(want) {
			c.t.Fatalf("%s call %d: mask keeps %d observations, a scan finds %d", s.T.Path, s.Call, len(got), len(want))
		}
		for k := range got {
			if got[k] != want[k] {
				c.t.Fatalf("%s call %d: observation %d is %v, a scan finds %v", s.T.Path, s.Call, k, got[k], want[k])
			}
		}
	}
}

// TestIncrementalStateMatchesRecount replays every strategy over the shipped
// corpora (and a 20,000-token window, so that every strategy compacts
// repeatedly), one Shared per transcript as the analysis does (so replays
// also reuse each other's arrays), checking the running figures against a
// recount before every call.
func TestIncrementalStateMatchesRecount(t *testing.T) {
	in, err := loader.Walk([]string{filepath.Join(testutil.RepoRoot(t), "corpora")})
	if err != nil {
		t.Fatal(err)
	}
	metric := ruler(t, "calibrated")
	checks, events := 0, 0
	for _, f := range in.Files {
		err := loader.ReadFile(f.Path, loader.Options{}, func(tr *transcript.Transcript) error {
			sh := NewShared(tr)
			for _, window := range []int{0, 20_000} {
				opt := &Options{Window: window, Metric: metric, Rulers: rulers}
				for _, spec := range Specs() {
					st := &checkingStrategy{Strategy: spec.New(spec.Params()), t: t, checks: &checks}
					_, evs := Replay(sh, spec.ID, st, opt, 0, 1)
					events += len(evs)
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	if checks == 0 || events == 0 {
		t.Fatalf("%d checks, %d events: nothing replayed", checks, events)
	}
}
