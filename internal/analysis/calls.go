package analysis

import (
	"math"

	"github.com/compactbench/compactbench/internal/tokens"
	"github.com/compactbench/compactbench/internal/transcript"
)

// CallRow is a row of the calls table: one API call
// (transcript.Message.IsCall), its real context and each ruler's estimate
// (tokens.Call has the definitions). A call whose usage was not recorded
// (transcript.Message.Measured is false) has its real context and every
// ruler's columns empty; a ruler the run did not compute leaves its columns
// empty (null in Parquet); err is empty on anchor calls, where it is 0 by
// construction.
type CallRow struct {
	// RunID and ConfigHash identify the run (filled by the table writer),
	// so the tables of several runs can be unioned.
	RunID        string `parquet:"run_id" json:"run_id"`
	ConfigHash   string `parquet:"config_hash" json:"config_hash"`
	Path         string `parquet:"path" json:"path"`
	TranscriptID string `parquet:"transcript_id" json:"transcript_id"`
	CallIndex    int64  `parquet:"call_index" json:"call_index"`
	MessageID    string `parquet:"message_id" json:"message_id"`
	Line         int64  `parquet:"line" json:"line"`
	Model        string `parquet:"model" json:"model"`
	// Tokenizer is the model's tokenizer generation (the model table's).
	Tokenizer string `parquet:"tokenizer" json:"tokenizer"`
	// RealContext is usage.Context(), empty when no usage was recorded.
	RealContext *int64 `parquet:"real_context,optional" json:"real_context"`
	// Anchor: the overhead was taken from this call. Drop: the real
	// context fell since the previous call with no compaction recorded.
	// Complete: no load problem precedes it.
	Anchor        bool     `parquet:"anchor" json:"anchor"`
	Drop          bool     `parquet:"drop" json:"drop"`
	Complete      bool     `parquet:"complete" json:"complete"`
	EstChars4     *int64   `parquet:"est_chars4,optional" json:"est_chars4"`
	ErrChars4     *float64 `parquet:"err_chars4,optional" json:"err_chars4"`
	EstChars4Msg  *int64   `parquet:"est_chars4msg,optional" json:"est_chars4msg"`
	ErrChars4Msg  *float64 `parquet:"err_chars4msg,optional" json:"err_chars4msg"`
	EstO200k      *int64   `parquet:"est_o200k,optional" json:"est_o200k"`
	ErrO200k      *float64 `parquet:"err_o200k,optional" json:"err_o200k"`
	EstCl100k     *int64   `parquet:"est_cl100k,optional" json:"est_cl100k"`
	ErrCl100k     *float64 `parquet:"err_cl100k,optional" json:"err_cl100k"`
	EstCalibrated *int64   `parquet:"est_calibrated,optional" json:"est_calibrated"`
	ErrCalibrated *float64 `parquet:"err_calibrated,optional" json:"err_calibrated"`
}

// Slots returns the est and err fields of a registered ruler.
func (r *CallRow) Slots(id tokens.RulerID) (**int64, **float64) {
	return rulerSlots(id, &r.EstChars4, &r.ErrChars4, &r.EstChars4Msg, &r.ErrChars4Msg, &r.EstO200k, &r.ErrO200k,
		&r.EstCl100k, &r.ErrCl100k, &r.EstCalibrated, &r.ErrCalibrated)
}

// BoundaryRow is a row of the compact_boundaries table: a compaction the
// recording harness performed, its own count of the context (preTokens) and
// each ruler's estimate of the context at that moment (overhead from the
// governing anchor + the prompt up to the event). err = (est − pre)/pre.
type BoundaryRow struct {
	// RunID and ConfigHash identify the run (filled by the table writer),
	// so the tables of several runs can be unioned.
	RunID        string `parquet:"run_id" json:"run_id"`
	ConfigHash   string `parquet:"config_hash" json:"config_hash"`
	Path         string `parquet:"path" json:"path"`
	TranscriptID string `parquet:"transcript_id" json:"transcript_id"`
	EventIndex   int64  `parquet:"event_index" json:"event_index"`
	Line         int64  `parquet:"line" json:"line"`
	Kind         string `parquet:"kind" json:"kind"`
	Trigger      string `parquet:"trigger" json:"trigger"`
	PreTokens    int64  `parquet:"pre_tokens" json:"pre_tokens"`
	TokensSaved  int64  `parquet:"tokens_saved" json:"tokens_saved"`
	// PostTokens is the harness's own count of the context right after a
	// full compaction (Claude Code's compactMetadata.postTokens), 0 when not
	// recorded: with PreTokens, the compaction's real compression.
	PostTokens int64 `parquet:"post_tokens" json:"post_tokens"`
	// LastCallIndex and LastCallReal describe the last recorded call before
	// the event (empty when none).
	LastCallIndex *int64   `parquet:"last_call_index,optional" json:"last_call_index"`
	LastCallReal  *int64   `parquet:"last_call_real,optional" json:"last_call_real"`
	EstChars4     *int64   `parquet:"est_chars4,optional" json:"est_chars4"`
	ErrChars4     *float64 `parquet:"err_chars4,optional" json:"err_chars4"`
	EstChars4Msg  *int64   `parquet:"est_chars4msg,optional" json:"est_chars4msg"`
	ErrChars4Msg  *float64 `parquet:"err_chars4msg,optional" json:"err_chars4msg"`
	EstO200k      *int64   `parquet:"est_o200k,optional" json:"est_o200k"`
	ErrO200k      *float64 `parquet:"err_o200k,optional" json:"err_o200k"`
	EstCl100k     *int64   `parquet:"est_cl100k,optional" json:"est_cl100k"`
	ErrCl100k     *float64 `parquet:"err_cl100k,optional" json:"err_cl100k"`
	EstCalibrated *int64   `parquet:"est_calibrated,optional" json:"est_calibrated"`
	ErrCalibrated *float64 `parquet:"err_calibrated,optional" json:"err_calibrated"`
}

// Slots returns the est and err fields of a registered ruler.
func (r *BoundaryRow) Slots(id tokens.RulerID) (**int64, **float64) {
	return rulerSlots(id, &r.EstChars4, &r.ErrChars4, &r.EstChars4Msg, &r.ErrChars4Msg, &r.EstO200k, &r.ErrO200k,
		&r.EstCl100k, &r.ErrCl100k, &r.EstCalibrated, &r.ErrCalibrated)
}

// rulerSlots picks a ruler's pair of columns.
func rulerSlots(id tokens.RulerID, e1 **int64, r1 **float64, e2 **int64, r2 **float64, e3 **int64, r3 **float64,
	e4 **int64, r4 **float64, e5 **int64, r5 **float64) (**int64, **float64) {
	switch id {
	case tokens.RulerChars4:
		return e1, r1
	case tokens.RulerChars4Msg:
		return e2, r2
	case tokens.RulerO200k:
		return e3, r3
	case tokens.RulerCl100k:
		return e4, r4
	case tokens.RulerCalibrated:
		return e5, r5
	}
	return nil, nil
}

// rulers are the config's resolved rulers (the default set when none).
func (c *Config) rulers() *tokens.RulerSet {
	if c.Rulers == nil {
		return tokens.DefaultRulerSet()
	}
	return c.Rulers
}

// callRows measures the rulers of t's generation on t's recorded calls
// and compactions.
func callRows(t *transcript.Transcript, cfg *Config, gr *tokens.GenRulers) ([]CallRow, []BoundaryRow) {
	rulers := gr.Measured
	est := tokens.EstimateCalls(t, rulers, cfg.rulers().Overhead(), cfg.Models)
	calls, index := unmeasuredRows(t, cfg)
	for i := range est.Calls {
		c := &est.Calls[i]
		row := &calls[index[c.Message]]
		rc := c.Real
		row.RealContext, row.Anchor, row.Drop, row.Complete = &rc, c.Anchor, c.Drop, c.Complete
		for r, ru := range rulers {
			e, errp := row.Slots(ru.ID())
			v := c.Est[r]
			*e = &v
			if !c.Anchor {
				x := c.Err(r)
				*errp = &x
			}
		}
	}
	var bounds []BoundaryRow
	for i := range est.Boundaries {
		b := &est.Boundaries[i]
		c := b.Compaction
		row := BoundaryRow{Path: t.Path, TranscriptID: t.ID, EventIndex: int64(b.Index), Line: int64(c.Line),
			Kind: string(c.Kind), Trigger: c.Trigger, PreTokens: c.PreTokens, TokensSaved: c.TokensSaved, PostTokens: c.PostTokens}
		if b.LastCall >= 0 {
			li, lr := int64(index[est.Calls[b.LastCall].Message]), b.LastReal
			row.LastCallIndex, row.LastCallReal = &li, &lr
		}
		if b.Est != nil {
			for r, ru := range rulers {
				e, errp := row.Slots(ru.ID())
				v := b.Est[r]
				*e = &v
				if c.PreTokens > 0 {
					x := float64(v-c.PreTokens) / float64(c.PreTokens)
					*errp = &x
				}
			}
		}
		bounds = append(bounds, row)
	}
	return calls, bounds
}

// unmeasuredRows makes the calls table's row of every API call of t
// (transcript.Transcript.Calls), with what the call itself says, and the
// row of each call's message index; the measured calls' figures are filled
// in from the rulers' estimates.
func unmeasuredRows(t *transcript.Transcript, cfg *Config) ([]CallRow, map[int]int) {
	idx := t.Calls()
	if len(idx) == 0 {
		return nil, nil
	}
	firstProblem := math.MaxInt
	for _, p := range t.Problems {
		firstProblem = min(firstProblem, p.Line)
	}
	rows := make([]CallRow, len(idx))
	index := make(map[int]int, len(idx))
	for k, mi := range idx {
		m := &t.Messages[mi]
		rows[k] = CallRow{Path: t.Path, TranscriptID: t.ID, CallIndex: int64(k), MessageID: m.ID, Line: int64(m.Line),
			Model: m.Model, Tokenizer: cfg.Models.Lookup(m.Model).Tokenizer, Complete: m.Line < firstProblem}
		index[mi] = k
	}
	return rows, index
}
