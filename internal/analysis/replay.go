package analysis

import (
	"github.com/compactbench/compactbench/internal/anchors"
	"github.com/compactbench/compactbench/internal/compaction"
	"github.com/compactbench/compactbench/internal/tokens"
	"github.com/compactbench/compactbench/internal/transcript"
)

// RunRow is a row of the runs table: one strategy's replay of one
// transcript (compaction.Run has the definitions).
type RunRow struct {
	Path                string   `parquet:"path" json:"path"`
	TranscriptID        string   `parquet:"transcript_id" json:"transcript_id"`
	Strategy            string   `parquet:"strategy" json:"strategy"`
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
}

// EventRow is a row of the events table: one compaction (compaction.Event
// has the definitions).
type EventRow struct {
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
	NeedDetail       string   `parquet:"need_detail" json:"need_detail"`
	FileRecall       *float64 `parquet:"file_recall,optional" json:"file_recall"`
	ErrorRecall      *float64 `parquet:"error_recall,optional" json:"error_recall"`
	IntentKept       *bool    `parquet:"intent_kept,optional" json:"intent_kept"`
	TriggerTokens    int64    `parquet:"trigger_tokens" json:"trigger_tokens"`
	PreTokens        int64    `parquet:"pre_tokens" json:"pre_tokens"`
	SummarizerInput  int64    `parquet:"summarizer_input" json:"summarizer_input"`
}

// replays reports whether a transcript is replayed: sessions and subagents
// with at least one model call. Compaction calls and side questions copy
// their parent's records and would count them twice.
func replays(t *transcript.Transcript) bool {
	if t.Kind != transcript.KindSession && t.Kind != transcript.KindSubagent {
		return false
	}
	for i := range t.Messages {
		if t.Messages[i].Role == transcript.RoleAssistant {
			return true
		}
	}
	return false
}

// replayRows replays every configured strategy over t.
func replayRows(t *transcript.Transcript, cfg *Config) ([]RunRow, []EventRow, *ContextSeries) {
	if !replays(t) {
		return nil, nil, nil
	}
	metric, err := cfg.MetricRuler()
	if err != nil {
		return nil, nil, nil
	}
	cc := cfg.compaction()
	opt := &compaction.Options{Mode: cc.Mode, Window: cc.Window, Metric: metric, Prices: cc.Prices,
		SummaryPromptTokens: cc.SummaryPromptTokens,
		Rulers:              cfg.strategyRulers(metric), Stop: cfg.cancelled}
	sh := compaction.NewShared(t)
	if cfg.Anchors != nil { // rule sets given with --rules are usable by strategies too
		sh.RuleSets = map[string]*anchors.RuleSet{}
		for _, rs := range cfg.Anchors.Sets {
			sh.RuleSets[rs.Name] = rs
		}
	}
	overhead := compaction.Overhead(sh, metric)
	base := compaction.Baseline(sh, opt, overhead)
	var runs []RunRow
	var events []EventRow
	series := newSeries(t, sh)
	for _, spec := range cc.Enabled() {
		if cfg.cancelled() {
			break
		}
		run, evs := compaction.Replay(sh, spec.ID, spec.New(cc.Params[spec.ID]), opt, overhead, base.CostUSD)
		series.add(&run, evs)
		runs = append(runs, RunRow{Path: t.Path, TranscriptID: t.ID, Strategy: spec.ID, Mode: cc.Mode.String(),
			Window: int64(run.Window), Calls: int64(run.Calls), Overhead: int64(run.Overhead),
			Compactions: int64(run.Compactions), Overflows: int64(run.Overflows),
			PeakContext: int64(run.PeakContext), FinalContext: int64(run.FinalContext), TokensProcessed: run.TokensProcessed,
			CostUSD: run.CostUSD, CostRatio: run.CostRatio, BaselineCostUSD: run.BaselineUSD, Thrash: int64(run.Thrash), MeanCompression: run.MeanCompression,
			SyntheticAnchorRate: run.SyntheticAnchorRate, MeanNeedRecall: run.MeanNeedRecall})
		for i := range evs {
			e := &evs[i]
			events = append(events, EventRow{Path: t.Path, TranscriptID: t.ID, Strategy: spec.ID, Round: int64(e.Round),
				CallIndex: int64(e.Call), TurnIndex: int64(e.Turn), Action: e.Action,
				TokensBefore: int64(e.TokensBefore), TokensAfter: int64(e.TokensAfter),
				CompressionRatio: e.CompressionRatio, LowCompression: e.LowCompression,
				AnchorKind: e.AnchorKind, AnchorType: e.AnchorType, AnchorRule: e.AnchorRule, AnchorUsed: e.AnchorUsed,
				KeptTurns: int64(e.KeptTurns), SummarizedTurns: int64(e.SummarizedTurns), SummaryTokens: int64(e.SummaryTokens),
				OrphanResults: int64(e.OrphanResults), DanglingCalls: int64(e.DanglingCalls),
				NeedFacts: int64(e.NeedFacts), NeedKept: int64(e.NeedKept), NeedRecall: e.NeedRecall(), NeedDetail: e.NeedDetail,
				FileRecall: e.FileRecall, ErrorRecall: e.ErrorRecall, IntentKept: e.IntentKept,
				TriggerTokens: int64(e.TriggerTokens), PreTokens: e.PreTokens, SummarizerInput: int64(e.SummarizerInput)})
		}
	}
	return runs, events, series
}

// compaction is the strategies configuration (defaults when none is set).
// strategyRulers resolves the rulers strategies name in their parameters:
// "metric" and the metric's own name are the metric ruler; any other name is
// built like the run's rulers (calibrated with the config's factors), so a
// strategy set to count with calibrated does so whatever --ruler says.
func (c *Config) strategyRulers(metric *tokens.Ruler) func(string) (compaction.Ruler, error) {
	return func(name string) (compaction.Ruler, error) {
		if name == "metric" || name == metric.Name() {
			return metric, nil
		}
		return c.ruler(name)
	}
}

// Analyses run concurrently on one Config: this never writes to it.
func (c *Config) compaction() *compaction.Config {
	if c.Compaction == nil {
		return compaction.DefaultConfig()
	}
	return c.Compaction
}
