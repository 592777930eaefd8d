package analysis

import (
	"strconv"
	"strings"
	"sync"

	"github.com/compactbench/compactbench/internal/anchors"
	"github.com/compactbench/compactbench/internal/compaction"
	"github.com/compactbench/compactbench/internal/tokens"
	"github.com/compactbench/compactbench/internal/transcript"
)

// RunRow is a row of the runs table: one strategy's replay of one
// transcript (compaction.Run has the definitions).
type RunRow struct {
	// RunID and ConfigHash identify the run (filled by the table writer),
	// so the tables of several runs can be unioned.
	RunID        string `parquet:"run_id" json:"run_id"`
	ConfigHash   string `parquet:"config_hash" json:"config_hash"`
	Path         string `parquet:"path" json:"path"`
	TranscriptID string `parquet:"transcript_id" json:"transcript_id"`
	Strategy     string `parquet:"strategy" json:"strategy"`
	// RuleSet is the anchor rule set the strategy selects with ("" for
	// strategies without anchors).
	RuleSet             string   `parquet:"rule_set" json:"rule_set"`
	Mode                string   `parquet:"mode" json:"mode"`
	Window              int64    `parquet:"window" json:"window"`
	Calls               int64    `parquet:"calls" json:"calls"`
	Overhead            int64    `parquet:"overhead" json:"overhead"`
	Compactions         int64    `parquet:"compactions" json:"compactions"`
	Overflows           int64    `parquet:"overflows" json:"overflows"`
	PeakContext         int64    `parquet:"peak_context" json:"peak_context"`
	FinalContext        int64    `parquet:"final_context" json:"final_context"`
	TokensProcessed     int64    `parquet:"tokens_processed" json:"tokens_processed"`
	CostUSD             float64  `parquet:"cost_usd" json:"cost_usd"`
	CostRatio           *float64 `parquet:"cost_ratio,optional" json:"cost_ratio"`
	BaselineCostUSD     float64  `parquet:"baseline_cost_usd" json:"baseline_cost_usd"`
	Thrash              int64    `parquet:"thrash" json:"thrash"`
	MeanCompression     *float64 `parquet:"mean_compression,optional" json:"mean_compression"`
	SyntheticAnchorRate *float64 `parquet:"synthetic_anchor_rate,optional" json:"synthetic_anchor_rate"`
	MeanNeedRecall      *float64 `parquet:"mean_need_recall,optional" json:"mean_need_recall"`
	// FitsWindow: no call's prompt exceeded the window.
	FitsWindow bool `parquet:"fits_window" json:"fits_window"`
	// KeptEverything and FreedUnder1Pct count compactions that dropped no
	// recorded message, and that freed less than 1 % of the window.
	KeptEverything int64 `parquet:"kept_everything" json:"kept_everything"`
	FreedUnder1Pct int64 `parquet:"freed_under_1pct" json:"freed_under_1pct"`
	// PeakTrigger is the trigger's largest measure before a call and
	// TriggerLimit its limit there (0: the strategy states none).
	PeakTrigger  int64 `parquet:"peak_trigger" json:"peak_trigger"`
	TriggerLimit int64 `parquet:"trigger_limit" json:"trigger_limit"`
	// Skips are the calls where the trigger fired but the selection found
	// nothing to compact.
	Skips int64 `parquet:"skips" json:"skips"`
	// BaselineOverflows are the calls that would exceed the window
	// without compaction.
	BaselineOverflows int64 `parquet:"baseline_overflows" json:"baseline_overflows"`
}

// EventRow is a row of the events table: one compaction (compaction.Event
// has the definitions).
type EventRow struct {
	// RunID and ConfigHash identify the run (filled by the table writer),
	// so the tables of several runs can be unioned.
	RunID            string   `parquet:"run_id" json:"run_id"`
	ConfigHash       string   `parquet:"config_hash" json:"config_hash"`
	Path             string   `parquet:"path" json:"path"`
	TranscriptID     string   `parquet:"transcript_id" json:"transcript_id"`
	Strategy         string   `parquet:"strategy" json:"strategy"`
	Round            int64    `parquet:"round" json:"round"`
	CallIndex        int64    `parquet:"call_index" json:"call_index"`
	TurnIndex        int64    `parquet:"turn_index" json:"turn_index"`
	Action           string   `parquet:"action" json:"action"`
	TokensBefore     int64    `parquet:"tokens_before" json:"tokens_before"`
	TokensAfter      int64    `parquet:"tokens_after" json:"tokens_after"`
	CompressionRatio float64  `parquet:"compression_ratio" json:"compression_ratio"`
	LowCompression   bool     `parquet:"low_compression" json:"low_compression"`
	AnchorKind       string   `parquet:"anchor_kind" json:"anchor_kind"`
	AnchorType       string   `parquet:"anchor_type" json:"anchor_type"`
	AnchorRule       string   `parquet:"anchor_rule" json:"anchor_rule"`
	AnchorUsed       bool     `parquet:"anchor_used" json:"anchor_used"`
	KeptTurns        int64    `parquet:"kept_turns" json:"kept_turns"`
	SummarizedTurns  int64    `parquet:"summarized_turns" json:"summarized_turns"`
	SummaryTokens    int64    `parquet:"summary_tokens" json:"summary_tokens"`
	OrphanResults    int64    `parquet:"orphan_results" json:"orphan_results"`
	DanglingCalls    int64    `parquet:"dangling_calls" json:"dangling_calls"`
	NeedFacts        int64    `parquet:"need_facts" json:"need_facts"`
	NeedKept         int64    `parquet:"need_kept" json:"need_kept"`
	NeedRecall       *float64 `parquet:"need_recall,optional" json:"need_recall"`
	// NeedDetail breaks need_kept / need_facts down by fact kind.
	NeedDetail      []NeedKind `parquet:"need_detail,list" json:"need_detail"`
	FileRecall      *float64   `parquet:"file_recall,optional" json:"file_recall"`
	ErrorRecall     *float64   `parquet:"error_recall,optional" json:"error_recall"`
	IntentKept      *bool      `parquet:"intent_kept,optional" json:"intent_kept"`
	TriggerTokens   int64      `parquet:"trigger_tokens" json:"trigger_tokens"`
	PreTokens       int64      `parquet:"pre_tokens" json:"pre_tokens"`
	SummarizerInput int64      `parquet:"summarizer_input" json:"summarizer_input"`
	// Timestamp is the recording's timestamp of the last message before
	// the compaction; TriggerReason why it happened.
	Timestamp     string `parquet:"timestamp" json:"timestamp"`
	TriggerReason string `parquet:"trigger_reason" json:"trigger_reason"`
	// KeptEverything: no recorded message was dropped (only earlier
	// written text replaced). DroppedTokens: what was removed or changed.
	KeptEverything bool  `parquet:"kept_everything" json:"kept_everything"`
	DroppedTokens  int64 `parquet:"dropped_tokens" json:"dropped_tokens"`
	// NeedLost are the needed-later facts the compacted context lost
	// (need_facts − need_kept).
	NeedLost int64 `parquet:"need_lost" json:"need_lost"`
}

// replays reports whether a transcript is replayed: sessions and subagents
// with at least one model call. Compaction calls and side questions copy
// their parent's records and would count them twice.
func replays(t *transcript.Transcript) bool {
	if t.Kind != transcript.KindSession && t.Kind != transcript.KindSubagent {
		return false
	}
	for i := range t.Messages {
		if t.Messages[i].IsCall() {
			return true
		}
	}
	return false
}

// replayRows replays every configured strategy over t, whose turns are
// turns; evals are the anchor suite's evaluations of them (nil without one),
// which the strategies selecting with one of its sets read.
func replayRows(t *transcript.Transcript, turns []transcript.Turn, evals []*anchors.Evaluation, cfg *Config, gr *tokens.GenRulers) ([]RunRow, []EventRow, []SummaryRow, *ContextSeries) {
	if !replays(t) {
		return nil, nil, nil, nil
	}
	metric := gr.Metric
	cc := cfg.compaction()
	opt := &compaction.Options{Mode: cc.Mode, Window: cc.Window, Metric: metric, Prices: cc.Prices, Models: cfg.Models,
		SummaryPromptTokens: cc.SummaryPromptTokens,
		Rulers:              strategyRulers(gr), Summarizer: cfg.Summarizer, Stop: cfg.cancelled}
	sh := compaction.NewSharedTurns(t, turns, cfg.Models)
	sh.RuleSets = cfg.strategyRuleSets()
	for _, e := range evals {
		sh.ShareEvaluation(e)
	}
	overhead := compaction.Overhead(sh, metric)
	base := compaction.Baseline(sh, opt, overhead)
	var runs []RunRow
	var events []EventRow
	var summaries []SummaryRow
	series := newSeries(t, sh)
	// Each replay's events become rows before the next replay reuses the
	// list, and the next transcript a worker replays takes it over.
	lent := eventLists.Get().(*[]compaction.Event)
	evs := *lent
	used := 0 // the most events a replay left in evs: past it evs is zero
	defer func() {
		clear(evs[:used]) // no strings of this transcript stay reachable from the pool
		*lent = evs[:0]
		eventLists.Put(lent)
	}()
	for _, st := range cfg.strategies() {
		if cfg.cancelled() {
			break
		}
		id := st.Spec.ID
		var run compaction.Run
		run, evs = compaction.ReplayAppend(sh, id, st.Spec.New(st.Params), opt, overhead, base.CostUSD, evs)
		used = max(used, len(evs))
		series.add(&run, evs)
		runs = append(runs, runRow(t, &st, cc.Mode, &run, &base))
		for i := range evs {
			e := &evs[i]
			events = append(events, eventRow(t, id, e))
			if src := e.Summary.Source; src != "" && src != compaction.SourceExtractive {
				summaries = append(summaries, summaryRow(t, id, e))
			}
		}
	}
	return runs, events, summaries, series
}

// eventLists holds event lists between transcripts' replays.
var eventLists = sync.Pool{New: func() any { return new([]compaction.Event) }}

// runRow is the runs row of one strategy's replay of t.
func runRow(t *transcript.Transcript, st *Strategy, mode compaction.Mode, run, base *compaction.Run) RunRow {
	return RunRow{Path: t.Path, TranscriptID: t.ID, Strategy: st.Spec.ID,
		RuleSet: st.RuleSet, Mode: mode.String(),
		Window: int64(run.Window), Calls: int64(run.Calls), Overhead: int64(run.Overhead),
		Compactions: int64(run.Compactions), Overflows: int64(run.Overflows),
		PeakContext: int64(run.PeakContext), FinalContext: int64(run.FinalContext), TokensProcessed: run.TokensProcessed,
		CostUSD: run.CostUSD, CostRatio: run.CostRatio, BaselineCostUSD: run.BaselineUSD, Thrash: int64(run.Thrash), MeanCompression: run.MeanCompression,
		SyntheticAnchorRate: run.SyntheticAnchorRate, MeanNeedRecall: run.MeanNeedRecall,
		FitsWindow: run.Overflows == 0, KeptEverything: int64(run.KeptEverything), FreedUnder1Pct: int64(run.FreedUnder1),
		PeakTrigger: int64(run.PeakTrigger), TriggerLimit: int64(run.TriggerLimit), Skips: int64(run.Skips), BaselineOverflows: int64(base.Overflows)}
}

// eventRow is the events row of one compaction.
func eventRow(t *transcript.Transcript, id string, e *compaction.Event) EventRow {
	return EventRow{Path: t.Path, TranscriptID: t.ID, Strategy: id, Round: int64(e.Round),
		CallIndex: int64(e.Call), TurnIndex: int64(e.Turn), Action: e.Action,
		TokensBefore: int64(e.TokensBefore), TokensAfter: int64(e.TokensAfter),
		CompressionRatio: e.CompressionRatio, LowCompression: e.LowCompression,
		AnchorKind: e.AnchorKind, AnchorType: e.AnchorType, AnchorRule: e.AnchorRule, AnchorUsed: e.AnchorUsed,
		KeptTurns: int64(e.KeptTurns), SummarizedTurns: int64(e.SummarizedTurns), SummaryTokens: int64(e.SummaryTokens),
		OrphanResults: int64(e.OrphanResults), DanglingCalls: int64(e.DanglingCalls),
		NeedFacts: int64(e.NeedFacts), NeedKept: int64(e.NeedKept), NeedRecall: e.NeedRecall(), NeedDetail: needKinds(e.NeedDetail),
		FileRecall: e.FileRecall, ErrorRecall: e.ErrorRecall, IntentKept: e.IntentKept,
		TriggerTokens: int64(e.TriggerTokens), PreTokens: e.PreTokens, SummarizerInput: int64(e.SummarizerInput),
		Timestamp: e.Timestamp, TriggerReason: e.TriggerReason, KeptEverything: e.KeptEverything,
		DroppedTokens: int64(e.DroppedTokens), NeedLost: int64(e.NeedFacts - e.NeedKept)}
}

// summaryRow is the summaries row of a compaction whose summary a model
// (or its cache) wrote.
func summaryRow(t *transcript.Transcript, id string, e *compaction.Event) SummaryRow {
	return SummaryRow{Path: t.Path, TranscriptID: t.ID, Strategy: id, Round: int64(e.Round),
		CallIndex: int64(e.Call), Source: e.Summary.Source, Model: e.Summary.Model, Error: e.Summary.Err, Attempts: int64(e.Summary.Attempts),
		InputTokens: int64(e.Summary.InputTokens), OutputTokens: int64(e.Summary.OutputTokens), CostUSD: e.Summary.CostUSD,
		SummaryTokens: int64(e.SummaryTokens), ExtractiveTokens: int64(e.ExtractiveTokens), NeedRecall: e.NeedRecall()}
}

// SummaryRow is a row of the summaries table: one per compaction event
// whose summary a model was asked for (only with --summarizer other than
// extractive). ExtractiveTokens is the size of the extractive summary the
// strategy would have written for the same event, beside the model's.
type SummaryRow struct {
	// RunID and ConfigHash identify the run (filled by the table writer).
	RunID            string   `parquet:"run_id" json:"run_id"`
	ConfigHash       string   `parquet:"config_hash" json:"config_hash"`
	Path             string   `parquet:"path" json:"path"`
	TranscriptID     string   `parquet:"transcript_id" json:"transcript_id"`
	Strategy         string   `parquet:"strategy" json:"strategy"`
	Round            int64    `parquet:"round" json:"round"`
	CallIndex        int64    `parquet:"call_index" json:"call_index"`
	Source           string   `parquet:"summary_source" json:"summary_source"`
	Model            string   `parquet:"model" json:"model"`
	Error            string   `parquet:"error" json:"error"`
	Attempts         int64    `parquet:"attempts" json:"attempts"`
	InputTokens      int64    `parquet:"llm_input_tokens" json:"llm_input_tokens"`
	OutputTokens     int64    `parquet:"llm_output_tokens" json:"llm_output_tokens"`
	CostUSD          float64  `parquet:"llm_cost_usd" json:"llm_cost_usd"`
	SummaryTokens    int64    `parquet:"summary_tokens" json:"summary_tokens"`
	ExtractiveTokens int64    `parquet:"extractive_summary_tokens" json:"extractive_summary_tokens"`
	NeedRecall       *float64 `parquet:"need_recall,optional" json:"need_recall"`
}

// compaction is the strategies configuration (defaults when none is set).
// strategyRulers gives strategies the rulers their parameters name, from
// the transcript's generation's resolved rulers: "metric" and the metric's
// own name are the metric ruler, any other registered name that ruler of
// the generation (calibrated with the generation's factors), so a strategy
// set to count with calibrated does so whatever --ruler says. The name is a
// strategy parameter's value, which compaction.Config validated when the
// plan was resolved; the replay asks once per strategy and replay.
func strategyRulers(gr *tokens.GenRulers) func(string) (compaction.Ruler, error) {
	return func(name string) (compaction.Ruler, error) {
		if name == "metric" {
			return gr.Metric, nil
		}
		id, err := tokens.ParseRuler(name)
		if err != nil {
			return nil, err
		}
		return gr.Ruler(id), nil
	}
}

// strategyRuleSets are the rule sets strategies may name: the resolved
// ones (RuleSets) and those given with --rules; nil when there are none.
func (c *Config) strategyRuleSets() map[string]*anchors.RuleSet {
	if len(c.RuleSets) == 0 && c.Anchors == nil {
		return nil
	}
	out := make(map[string]*anchors.RuleSet, len(c.RuleSets))
	for name, rs := range c.RuleSets {
		out[name] = rs
	}
	if c.Anchors != nil { // rule sets given with --rules are usable by strategies too
		for _, rs := range c.Anchors.Sets {
			out[rs.Name] = rs
		}
	}
	return out
}

// Analyses run concurrently on one Config: this never writes to it.
func (c *Config) compaction() *compaction.Config {
	if c.Compaction == nil {
		return compaction.DefaultConfig()
	}
	return c.Compaction
}

// NeedKind is one fact kind's share of an event's need recall.
type NeedKind struct {
	Kind   string `parquet:"kind" json:"kind"`
	Kept   int64  `parquet:"kept" json:"kept"`
	Needed int64  `parquet:"needed" json:"needed"`
}

// needKinds parses compaction.Event.NeedDetail ("path=1/2;error=0/1").
func needKinds(detail string) []NeedKind {
	out := []NeedKind{}
	for rest, more := detail, true; more; {
		var part string
		part, rest, more = strings.Cut(rest, ";")
		kind, frac, ok := strings.Cut(part, "=")
		kept, needed, ok2 := strings.Cut(frac, "/")
		if !ok || !ok2 {
			continue
		}
		k, _ := strconv.ParseInt(kept, 10, 64)
		n, _ := strconv.ParseInt(needed, 10, 64)
		out = append(out, NeedKind{Kind: kind, Kept: k, Needed: n})
	}
	return out
}
