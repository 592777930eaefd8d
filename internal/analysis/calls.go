package analysis

import (
	"fmt"
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

// Slots returns the est and err fields of a ruler.
func (r *CallRow) Slots(ruler string) (**int64, **float64) {
	return rulerSlots(ruler, &r.EstChars4, &r.ErrChars4, &r.EstChars4Msg, &r.ErrChars4Msg, &r.EstO200k, &r.ErrO200k,
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

// Slots returns the est and err fields of a ruler.
func (r *BoundaryRow) Slots(ruler string) (**int64, **float64) {
	return rulerSlots(ruler, &r.EstChars4, &r.ErrChars4, &r.EstChars4Msg, &r.ErrChars4Msg, &r.EstO200k, &r.ErrO200k,
		&r.EstCl100k, &r.ErrCl100k, &r.EstCalibrated, &r.ErrCalibrated)
}

func rulerSlots(ruler string, e1 **int64, r1 **float64, e2 **int64, r2 **float64, e3 **int64, r3 **float64,
	e4 **int64, r4 **float64, e5 **int64, r5 **float64) (**int64, **float64) {
	switch ruler {
	case tokens.Chars4:
		return e1, r1
	case tokens.Chars4Msg:
		return e2, r2
	case tokens.O200k:
		return e3, r3
	case tokens.Cl100k:
		return e4, r4
	case tokens.Calibrated:
		return e5, r5
	}
	return nil, nil
}

// Rulers builds the rulers the config measures, in tokens.Names() order:
// the default set when none is named, the calibrated one with the config's
// (or the shipped) factors of tokenizer generation gen.
func (c *Config) Rulers(gen string) ([]*tokens.Ruler, error) {
	names := c.RulerNames
	if len(names) == 0 {
		names = tokens.DefaultNames()
	}
	out := make([]*tokens.Ruler, 0, len(names))
	for _, n := range names {
		r, err := c.ruler(n, gen)
		if err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return out, nil
}

// MetricRuler is the ruler the run's metrics count with (default
// calibrated, with the config's factors of generation gen).
func (c *Config) MetricRuler(gen string) (*tokens.Ruler, error) {
	name := c.Ruler
	if name == "" {
		name = tokens.Calibrated
	}
	return c.ruler(name, gen)
}

// ruler builds a registered ruler; the calibrated one with the factors of
// generation gen from the config's set (the shipped set when it has none).
func (c *Config) ruler(name, gen string) (*tokens.Ruler, error) {
	if name == tokens.Calibrated {
		return tokens.NewCalibrated(c.factors(gen)), nil
	}
	return tokens.ByName(name)
}

// factors are the calibrated ruler's factors of generation gen from the
// config's set (the shipped set when it has none).
func (c *Config) factors(gen string) *tokens.Factors {
	set := c.Calibration
	if set == nil {
		set = tokens.DefaultFactorSet()
	}
	f, _ := set.For(gen, c.Models)
	return f
}

// Generation is the tokenizer generation of a transcript's model.
func (c *Config) Generation(t *transcript.Transcript) string {
	return c.Models.Lookup(t.Model).Tokenizer
}

// Anchoring is the config's anchor mode (default segments).
func (c *Config) Anchoring() (tokens.Anchoring, error) {
	if c.Overhead == "" {
		return tokens.AnchorSegments, nil
	}
	a, ok := tokens.ParseAnchoring(c.Overhead)
	if !ok {
		return a, fmt.Errorf("overhead: want first or segments, got %q", c.Overhead)
	}
	return a, nil
}

// callRows measures the config's rulers on t's recorded calls and
// compactions. A config that cannot build its rulers yields no rows; the
// command validates the config before any analysis.
func callRows(t *transcript.Transcript, cfg *Config) ([]CallRow, []BoundaryRow) {
	rulers, err := cfg.Rulers(cfg.Generation(t))
	if err != nil {
		return nil, nil
	}
	mode, err := cfg.Anchoring()
	if err != nil {
		return nil, nil
	}
	est := tokens.EstimateCalls(t, rulers, mode, cfg.Models)
	calls, index := unmeasuredRows(t, cfg)
	for i := range est.Calls {
		c := &est.Calls[i]
		row := &calls[index[c.Message]]
		rc := c.Real
		row.RealContext, row.Anchor, row.Drop, row.Complete = &rc, c.Anchor, c.Drop, c.Complete
		for r, ru := range rulers {
			e, errp := row.Slots(ru.Name())
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
				e, errp := row.Slots(ru.Name())
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
