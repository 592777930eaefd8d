package compaction

import (
	"math"
	"sort"
	"testing"

	"github.com/compactbench/compactbench/internal/tokens"
	"github.com/compactbench/compactbench/internal/transcript"
)

// TestRealCorpusReplay replays every strategy over the real corpus's
// sessions and subagents of every format with a 60,000-token window, so that
// every strategy compacts.
func TestRealCorpusReplay(t *testing.T) {
	if testing.Short() {
		t.Skip("replays the whole real corpus")
	}
	ts := realTranscripts(t, false) // every format
	events, overflows := map[string]int{}, map[string]int{}
	var preErr []float64
	recorded, boundaries := 0, 0
	for _, tr := range ts {
		// The metric counts with the factors of the model's tokenizer.
		f, _ := tokens.DefaultFactorSet().For(tokens.DefaultModels().Lookup(tr.Model).Tokenizer, nil)
		metric := tokens.NewCalibrated(f)
		opt := &Options{Window: 60_000, Metric: metric, Rulers: rulers}
		sh := NewShared(tr)
		ov := Overhead(sh, metric)
		base := Baseline(sh, opt, ov)
		for _, c := range tr.Compactions {
			if c.Kind == transcript.CompactFull {
				boundaries++
			}
		}
		specs := Specs()
		// codelet and fspec as specified never fire (below); their
		// selection is exercised with the cache discount off.
		for _, id := range []string{"codelet", "fspec"} {
			spec, _ := SpecByID(id)
			p := spec.Params().(*AnchorParams)
			p.CacheDiscount = 0
			specs = append(specs, Spec{ID: id + "-nocache", New: func(any) Strategy { return spec.New(p) }, Params: spec.Params})
		}
		for _, spec := range specs {
			run, evs := Replay(sh, spec.ID, spec.New(spec.Params()), opt, ov, base.CostUSD)
			events[spec.ID] += len(evs)
			overflows[spec.ID] += run.Overflows
			if run.CostRatio == nil && base.CostUSD > 0 {
				t.Errorf("%s %s: no cost ratio", tr.Path, spec.ID)
			}
			for _, e := range evs {
				// Seed 004's boundary walks back over tool messages only, so
				// it splits a pair when the recording has another message
				// between a call and its result (Codex writes a developer
				// message there after an approval): the one invalid context
				// a source's rule really produces.
				if (e.OrphanResults != 0 || e.DanglingCalls != 0) && !(spec.ID == "window" && splitPairs(tr)) {
					t.Errorf("%s %s round %d: %d orphan results, %d dangling calls", tr.Path, spec.ID, e.Round, e.OrphanResults, e.DanglingCalls)
				}
				// Masking an output shorter than its placeholder grows the
				// context a little (the paper masks every older output). A
				// summary can also outgrow a tiny context: some Codex
				// rollouts start with an overhead (instructions, tools)
				// above the window, so every call compacts a few hundred
				// tokens; growth is checked only where content drove the
				// trigger.
				if e.TokensAfter > e.TokensBefore && e.Action != "microcompact" && e.Action != "mask" && ov < opt.Window/2 {
					t.Errorf("%s %s round %d: grew %d → %d", tr.Path, spec.ID, e.Round, e.TokensBefore, e.TokensAfter)
				}
				if spec.ID == "recorded" && e.Action == "recorded" {
					recorded++
					if e.PreTokens > 0 {
						preErr = append(preErr, math.Abs(float64(e.TokensBefore+ov-int(e.PreTokens)))/float64(e.PreTokens))
					}
				}
			}
		}
	}
	for _, spec := range Specs() {
		switch spec.ID {
		case "recorded":
		case "codelet", "fspec":
			// The cache-aware trigger (effective = prompt − 0.9 × cache
			// read) stays far below 90 % of the window while the cache is
			// warm: as specified, these strategies let the window overflow.
			// It fires only where nothing is cached yet (a first call that
			// already exceeds 90 % of the window).
			if events[spec.ID]*10 > events[spec.ID+"-nocache"] || overflows[spec.ID] == 0 || events[spec.ID+"-nocache"] == 0 {
				t.Errorf("%s: %d events, %d overflows; without the cache discount %d events", spec.ID,
					events[spec.ID], overflows[spec.ID], events[spec.ID+"-nocache"])
			}
		default:
			if events[spec.ID] == 0 {
				t.Errorf("%s never compacted with a 60k window", spec.ID)
			}
		}
	}
	if recorded != boundaries || recorded == 0 {
		t.Errorf("%d recorded events for %d compact boundaries", recorded, boundaries)
	}
	sort.Float64s(preErr)
	if len(preErr) > 0 && preErr[len(preErr)/2] > 0.05 {
		t.Errorf("recorded: median |overhead + tokens_before − preTokens| / preTokens = %.3f, want ≤ 5%% (the ruler's error)", preErr[len(preErr)/2])
	}
	t.Logf("recorded preTokens errors, sorted: %v", preErr)
	t.Logf("events per strategy: %v; overflows: %v; recorded preTokens errors: %v", events, overflows, preErr)
}

// splitPairs reports whether a recording has a non-tool message between a
// tool call and its result.
func splitPairs(tr *transcript.Transcript) bool {
	open := map[string]bool{}
	for _, m := range tr.Messages {
		results := false
		for _, b := range m.Blocks {
			switch b.Kind {
			case transcript.BlockToolUse:
				open[b.ToolID] = true
			case transcript.BlockToolResult:
				results = true
				delete(open, b.ToolID)
			}
		}
		if !results && m.Role != transcript.RoleAssistant && len(open) > 0 {
			return true
		}
	}
	return false
}
