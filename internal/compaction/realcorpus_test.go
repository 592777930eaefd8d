package compaction

import (
	"math"
	"sort"
	"strings"
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
	grew, keptAll, keptCount, keptRun := map[string]int{}, map[string]int{}, map[string]int{}, map[string]int{}
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
		for _, spec := range specs {
			run, evs := Replay(sh, spec.ID, spec.New(spec.Params()), opt, ov, base.CostUSD)
			events[spec.ID] += len(evs)
			keptRun[spec.ID] += run.KeptEverything
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
				// A summary that outweighs what it replaces grows the
				// context: the seeds' selections do this when they keep
				// every recorded message and re-summarize their own
				// previous summary (codelet's "last 3 turns" of a session
				// that is one long turn), or drop a few small messages
				// (seed 004's last-10-messages window). That is the
				// strategies' behaviour, counted per run (KeptEverything,
				// FreedUnder1); growth the written text does not explain
				// is a bug.
				if e.TokensAfter > e.TokensBefore && e.Action != "microcompact" && e.Action != "mask" && ov < opt.Window/2 {
					grew[spec.ID]++
					if e.KeptEverything {
						keptAll[spec.ID]++
					}
					if e.SummaryTokens <= e.DroppedTokens {
						t.Errorf("%s %s round %d: grew %d → %d with a summary of %d replacing %d", tr.Path, spec.ID, e.Round,
							e.TokensBefore, e.TokensAfter, e.SummaryTokens, e.DroppedTokens)
					}
				}
				if e.KeptEverything {
					keptCount[spec.ID]++
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
			// already exceeds 90 % of the window). The -raw variant fires.
			if events[spec.ID]*10 > events[spec.ID+"-raw"] || overflows[spec.ID] == 0 || events[spec.ID+"-raw"] == 0 {
				t.Errorf("%s: %d events, %d overflows; without the cache discount %d events", spec.ID,
					events[spec.ID], overflows[spec.ID], events[spec.ID+"-raw"])
			}
		case "codelet-budget", "fspec-budget":
			// A token budget for the kept tail compacts for real: fewer
			// overflows than the seed's 3-turn tail, and far fewer
			// compactions that keep everything (those left come from
			// transcripts whose fixed overhead alone fills the window).
			raw := strings.TrimSuffix(spec.ID, "-budget") + "-raw"
			if events[spec.ID] == 0 || overflows[spec.ID] >= overflows[raw] || keptCount[spec.ID]*4 > keptCount[raw] {
				t.Errorf("%s: %d events (%d kept everything), %d overflows; %s: %d overflows", spec.ID,
					events[spec.ID], keptCount[spec.ID], overflows[spec.ID], raw, overflows[raw])
			}
		default:
			if events[spec.ID] == 0 {
				t.Errorf("%s never compacted with a 60k window", spec.ID)
			}
		}
	}
	for id, n := range keptCount {
		if keptRun[id] != n {
			t.Errorf("%s: runs count %d compactions that kept everything, events %d", id, keptRun[id], n)
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
	t.Logf("compactions that grew the context: %v, of which kept every recorded message: %v; kept everything: %v", grew, keptAll, keptCount)
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
