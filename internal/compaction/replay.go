package compaction

import (
	"github.com/compactbench/compactbench/internal/tokens"
	"github.com/compactbench/compactbench/internal/transcript"
)

// Mode selects how a transcript is replayed.
type Mode int

// Modes.
const (
	// ModeReplay asks each strategy's trigger before every recorded call.
	ModeReplay Mode = iota
	// ModeOnce compacts the whole transcript once, at its end.
	ModeOnce
)

// ParseMode reads "replay" or "once".
func ParseMode(s string) (Mode, bool) {
	switch s {
	case "replay", "":
		return ModeReplay, true
	case "once":
		return ModeOnce, true
	}
	return 0, false
}

func (m Mode) String() string {
	if m == ModeOnce {
		return "once"
	}
	return "replay"
}

// Options are the run-wide settings of a replay.
type Options struct {
	Mode Mode
	// Window overrides every model's context window when > 0.
	Window int
	// Metric is the ruler all metrics are counted with.
	Metric Ruler
	// Rulers gives strategies the rulers they trigger on.
	Rulers func(name string) (Ruler, error)
	// Prices are matched before the model table's (a strategies file's).
	Prices []Price
	// Models is the model table: windows, prices, thinking rule (nil: the
	// shipped one).
	Models *tokens.Models
	// SummaryPromptTokens is the fixed prompt a summarizer call adds.
	SummaryPromptTokens int
	// Summarizer writes summaries (Deterministic when nil).
	Summarizer Summarizer
	// Stop, when set, is asked before each call: true ends the replay
	// there (a cancelled run), with the run summed up so far.
	Stop func() bool
}

// Run is one strategy's replay of one transcript, summed up.
type Run struct {
	Strategy string
	Calls    int
	// Window is the model window overflows are judged against;
	// WindowSource where it comes from (tokens.WindowTable, WindowInferred
	// or WindowFlag).
	Window       int
	WindowSource string
	Overhead     int
	// Compactions counts events; Overflows counts calls whose prompt
	// exceeded the window.
	Compactions int
	Overflows   int
	// PeakContext and FinalContext are prompt sizes, overhead included:
	// the largest over the calls, and after the whole recording.
	PeakContext  int
	FinalContext int
	// TokensProcessed sums the prompts of every call.
	TokensProcessed int64
	// CostUSD is the simulated bill; CostRatio is CostUSD over the
	// no-compaction replay's (nil when that is 0).
	CostUSD   float64
	CostRatio *float64
	// BaselineUSD is the no-compaction replay's cost.
	BaselineUSD float64
	// Thrash counts compactions that freed < 10 % of the context or came
	// within 2 calls of the previous one.
	Thrash int
	// MeanCompression, SyntheticAnchorRate and MeanNeedRecall average over
	// the events (nil when no event qualifies).
	MeanCompression     *float64
	SyntheticAnchorRate *float64
	MeanNeedRecall      *float64
	// KeptEverything counts compactions that dropped no recorded message
	// (Event.KeptEverything); FreedUnder1 those that freed less than 1 % of
	// the window (or grew the context).
	KeptEverything int
	FreedUnder1    int
	// Skips counts calls where the trigger fired but the selection found
	// nothing to compact (no event).
	Skips int
	// PeakTrigger is the largest measure the trigger returned before a
	// call (replay mode), and TriggerLimit its limit at that call (0 when
	// the strategy does not state one, TriggerRuler).
	PeakTrigger  int
	TriggerLimit int
	// Prompts is the prompt each call sent (overhead included), one per
	// call: the context-size series reports draw. Its maximum is
	// PeakContext and its sum TokensProcessed.
	Prompts []int
}

// Overhead is the fixed prompt overhead of a transcript: the first recorded
// call's real context minus the metric count of the messages before it, or
// 0 when no call recorded usage (or the difference is negative).
func Overhead(sh *Shared, metric Ruler) int {
	for _, ci := range sh.Calls {
		m := &sh.T.Messages[ci]
		if !m.Measured() {
			continue
		}
		before := 0
		for i := 0; i < ci; i++ {
			before += metric.Message(&sh.T.Messages[i])
		}
		return max(0, int(m.Usage.Context())-before)
	}
	return 0
}

// Replay runs one strategy over a transcript. baselineUSD is the cost of the
// no-compaction replay (0 to leave CostRatio nil).
func Replay(sh *Shared, id string, st Strategy, opt *Options, overhead int, baselineUSD float64) (Run, []Event) {
	return ReplayAppend(sh, id, st, opt, overhead, baselineUSD, nil)
}

// ReplayAppend is Replay appending the events to events[:0]: a caller that
// is done with one replay's events before the next (it turns them into
// rows) passes the previous replay's back and saves growing a new list.
func ReplayAppend(sh *Shared, id string, st Strategy, opt *Options, overhead int, baselineUSD float64, events []Event) (Run, []Event) {
	r := newReplayer(sh, id, st, opt, overhead)
	r.events = events[:0]
	defer r.s.release()
	for k, ci := range sh.Calls {
		if opt.Stop != nil && opt.Stop() {
			break
		}
		r.call(k, ci)
	}
	r.finish(baselineUSD)
	return r.run, r.events
}

// replayer is one strategy's replay of one transcript in progress.
type replayer struct {
	sh  *Shared
	id  string
	st  Strategy
	opt *Options
	s   *Sim
	run Run
	b   bill
	// rec is the recorded strategy (isRecorded), which applies the
	// recording's compactions (comps, those not applied yet) where they
	// happened instead of asking a trigger.
	rec        recordedApplier
	isRecorded bool
	comps      []transcript.Compaction
	// stripModel is the model s.strip was looked up for.
	stripModel string
	events     []Event
}

// newReplayer sets up a replay: the Sim (with the arrays a previous replay
// of the transcript lent), the run's header and the bill.
func newReplayer(sh *Shared, id string, st Strategy, opt *Options, overhead int) replayer {
	win, winSource := opt.Models.WindowOf(sh.T, opt.Window)
	s := &Sim{Shared: sh, Overhead: overhead, Window: win, Metric: opt.Metric, Rulers: opt.Rulers,
		Override: opt.Window, Summarizer: opt.Summarizer, strip: opt.Models.Lookup(sh.T.Model).StripsThinking, lastPrompt: -1}
	s.reuse()
	r := replayer{sh: sh, id: id, st: st, opt: opt, s: s, stripModel: sh.T.Model, comps: sh.T.Compactions,
		b: bill{p: PriceOf(opt.Prices, opt.Models, sh.T.Model)}}
	r.rec, r.isRecorded = st.(recordedApplier)
	r.run = Run{Strategy: id, Calls: len(sh.Calls), Window: win, WindowSource: winSource, Overhead: overhead,
		Prompts: make([]int, 0, len(sh.Calls))}
	return r
}

// call replays the k-th API call (message ci): the messages before it, the
// recording's own drop (recorded strategy), the model's thinking rule, the
// trigger and compaction (replay mode), then the prompt sent and its bill.
func (r *replayer) call(k, ci int) {
	s, sh := r.s, r.sh
	s.Call = k
	r.advance(ci)
	if fall, ok := sh.Drops[k]; ok && r.isRecorded {
		// The recording's own clearing: its content model (oldest outputs
		// cleared), then the overhead re-based on the recorded usage, as
		// the calls table re-anchors after a drop.
		r.compact(s.Tokens(), "unrecorded drop: the real context fell with no compaction recorded", r.rec.Drop(s, fall), 0)
		if u := sh.T.Messages[ci].Usage; u != nil {
			s.Overhead = max(0, int(u.Context())-s.Tokens())
		}
	}
	if m := sh.T.Messages[ci].Model; m != "" && m != r.stripModel {
		r.stripModel = m
		s.setStrip(r.opt.Models.Lookup(m).StripsThinking)
	}
	if r.opt.Mode == ModeReplay && !r.isRecorded {
		r.trigger(k)
	}
	r.send(ci)
}

// trigger asks the strategy's trigger before call k, keeps the peak measure
// (and the limit at it), and compacts when it fires.
func (r *replayer) trigger(k int) {
	s := r.s
	fire, trig := r.st.Trigger(s)
	if trig > r.run.PeakTrigger || k == 0 {
		r.run.PeakTrigger = trig
		if tr, ok := r.st.(TriggerRuler); ok {
			_, r.run.TriggerLimit = tr.TriggerRule(s)
		}
	}
	if fire {
		r.compact(trig, triggerReason(r.st, s, trig), r.st.Compact(s), 0)
	}
}

// send records the prompt call ci sends: its size, overflow and bill.
func (r *replayer) send(ci int) {
	s, run := r.s, &r.run
	prompt := s.Prompt()
	run.Prompts = append(run.Prompts, prompt)
	run.TokensProcessed += int64(prompt)
	run.PeakContext = max(run.PeakContext, prompt)
	if prompt > run.Window {
		run.Overflows++
	}
	out := 0
	if u := r.sh.T.Messages[ci].Usage; u != nil {
		out = int(u.Output)
	}
	r.b.call(prompt, s.CacheRead(), out)
	s.called()
}

// finish replays the messages after the last call (and, in once mode, the
// one compaction at the end), then sums the run up.
func (r *replayer) finish(baselineUSD float64) {
	s, run := r.s, &r.run
	s.Call = len(r.sh.Calls)
	r.advance(len(r.sh.T.Messages))
	if r.opt.Mode == ModeOnce && !r.isRecorded {
		_, trig := r.st.Trigger(s)
		r.compact(trig, "once: end of the recording", r.st.Compact(s), 0)
	}
	run.FinalContext = s.Prompt()
	run.CostUSD, run.BaselineUSD = r.b.usd, baselineUSD
	if baselineUSD > 0 {
		v := r.b.usd / baselineUSD
		run.CostRatio = &v
	}
	summarize(run, r.events)
}

// advance appends recorded messages up to index to; for the recorded
// strategy it applies each recorded compaction where it happened (before
// Messages[MessageIndex]).
func (r *replayer) advance(to int) {
	s := r.s
	for {
		for r.isRecorded && len(r.comps) > 0 && r.comps[0].MessageIndex <= s.Cursor {
			c := r.comps[0]
			r.comps = r.comps[1:]
			r.compact(int(c.PreTokens), recordedReason(&c), r.rec.Recorded(s, &c), c.PreTokens)
		}
		if s.Cursor >= to {
			return
		}
		s.append(s.Cursor + 1)
	}
}

// compact installs a compaction's outcome (unless it skipped), measures it
// into an event and bills the summarizer.
func (r *replayer) compact(trig int, reason string, out Outcome, pre int64) {
	s := r.s
	summary := s.summary
	s.summary = Summary{}
	if out.Skip {
		r.run.Skips++
		return
	}
	beforeTok := s.Tokens()
	s.replaceFrom(out.Ctx, out.same)
	s.Round++
	ev := r.event(trig, reason, &out, pre, summary)
	measureSplit(s, &ev, s.Ctx[:s.same], s.tail.ctx, beforeTok, &out)
	if summary.Extractive != "" {
		ev.ExtractiveTokens = s.Metric.Text(summary.Extractive)
		ev.Summary.Extractive = ""
	}
	if ev.KeptEverything {
		r.run.KeptEverything++
	}
	if float64(ev.TokensBefore-ev.TokensAfter) < 0.01*float64(r.run.Window) {
		r.run.FreedUnder1++
	}
	switch {
	case summary.Source == SourceLLM || summary.Source == SourceCache:
		r.b.usd += summary.CostUSD // the model's own usage at its price
	case out.SummarizerInput > 0:
		r.b.summarizer(out.SummarizerInput+r.opt.SummaryPromptTokens, ev.SummaryTokens)
	}
	r.events = append(r.events, ev)
}

// event is a compaction's event before measuring: where it happened, what
// the strategy did and why.
func (r *replayer) event(trig int, reason string, out *Outcome, pre int64, summary Summary) Event {
	s := r.s
	ev := Event{Strategy: r.id, Round: s.Round, Call: s.Call, Action: out.Action,
		AnchorKind: out.Anchor.Kind, AnchorType: out.Anchor.Type, AnchorRule: out.Anchor.Rule, AnchorUsed: out.Anchor.Used,
		TriggerTokens: trig, TriggerReason: reason, PreTokens: pre, SummarizerInput: out.SummarizerInput, Summary: summary}
	if s.Cursor > 0 {
		ev.Turn = s.TurnOf[s.Cursor-1]
		ev.Timestamp = r.sh.T.Messages[s.Cursor-1].Timestamp
	}
	return ev
}

// summarize fills a run's aggregates from its events.
func summarize(run *Run, events []Event) {
	run.Compactions = len(events)
	var comp, recall float64
	nRecall, needAnchor, synthetic := 0, 0, 0
	for i := range events {
		ev := &events[i]
		comp += ev.CompressionRatio
		if r := ev.NeedRecall(); r != nil {
			recall += *r
			nRecall++
		}
		if ev.AnchorKind != "" {
			needAnchor++
			if ev.AnchorKind == "synthetic" {
				synthetic++
			}
		}
		if ev.CompressionRatio < 0.10 || (i > 0 && ev.Call-events[i-1].Call <= 2) {
			run.Thrash++
		}
	}
	if len(events) > 0 {
		v := comp / float64(len(events))
		run.MeanCompression = &v
	}
	run.MeanNeedRecall = ratioF(recall, nRecall)
	run.SyntheticAnchorRate = ratio(synthetic, needAnchor)
}

func ratioF(sum float64, n int) *float64 {
	if n == 0 {
		return nil
	}
	v := sum / float64(n)
	return &v
}

// recordedApplier is implemented by the recorded strategy: it applies the
// compactions the recording holds, where they happened.
type recordedApplier interface {
	Recorded(s *Sim, c *transcript.Compaction) Outcome
	// Drop applies an unrecorded drop of fall real tokens before a call.
	Drop(s *Sim, fall int64) Outcome
}

// none never compacts: the reference replay for cost ratios.
type none struct{}

func (none) Trigger(*Sim) (bool, int) { return false, 0 }
func (none) Compact(*Sim) Outcome     { return Outcome{Skip: true} }

// Baseline replays the transcript without compaction.
func Baseline(sh *Shared, opt *Options, overhead int) Run {
	run, _ := Replay(sh, "none", none{}, opt, overhead, 0)
	return run
}

// recordedReason says why the harness compacted: its trigger and kind.
func recordedReason(c *transcript.Compaction) string {
	kind := "compact_boundary"
	if c.Kind == transcript.CompactMicro {
		kind = "microcompact_boundary"
	}
	if c.Trigger == "" {
		return "recorded " + kind
	}
	return "recorded " + kind + " (" + c.Trigger + ")"
}
