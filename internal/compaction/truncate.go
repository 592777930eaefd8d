package compaction

// TruncateParams configure the truncate baseline.
type TruncateParams struct {
	// TriggerFraction of the window fires the trigger.
	TriggerFraction float64 `yaml:"trigger_fraction"`
	// TargetFraction of the window is what truncation drops down to.
	TargetFraction float64 `yaml:"target_fraction"`
}

func init() {
	register(Spec{
		ID: "truncate", Source: "baseline",
		Doc:    "drop the oldest whole turns until under budget; no summary (the floor every strategy must beat)",
		Params: func() any { return &TruncateParams{TriggerFraction: 0.9, TargetFraction: 0.6} },
		New:    func(p any) Strategy { return &truncate{p: *p.(*TruncateParams)} },
	})
}

type truncate struct {
	p TruncateParams
	// plain says that, for the Sim sim at compaction round round, no item
	// of the context from 1 to plain-1 opens a turn. Between compactions
	// the context only grows, so a session's one long turn, which Compact
	// cannot cut (it keeps the last turn) while it fires before every call,
	// is searched for its end once, not at every call.
	sim          *Sim
	round, plain int
}

// plainTruncate turns truncate's remembered search off (tests compare).
var plainTruncate bool

func (t *truncate) Trigger(s *Sim) (bool, int) {
	return float64(s.Prompt()) > t.p.TriggerFraction*float64(s.Window), s.Prompt()
}

// Compact drops whole turns, oldest first, keeping at least the last one,
// until the prompt fits TargetFraction of the window. Dropping whole turns
// keeps every tool call with its result.
func (t *truncate) Compact(s *Sim) Outcome {
	target := int(t.p.TargetFraction * float64(s.Window))
	size := s.Prompt()
	cut := 0 // first item kept
	for cut < len(s.Ctx) && size > target {
		// the end of the turn that starts at cut
		end := cut + 1
		if cut == 0 && t.sim == s && t.round == s.Round && !plainTruncate {
			end = max(end, t.plain)
		}
		for end < len(s.Ctx) && !startsTurn(s, end) {
			end++
		}
		if cut == 0 {
			t.sim, t.round, t.plain = s, s.Round, end
		}
		if end >= len(s.Ctx) {
			break // never drop the last turn
		}
		for i := cut; i < end; i++ {
			size -= s.ItemTokens(i)
		}
		cut = end
	}
	if cut == 0 {
		return Outcome{Skip: true}
	}
	return Outcome{Ctx: append([]Item(nil), s.Ctx[cut:]...), Action: "truncate"}
}

// startsTurn reports whether context item i opens a turn of the recording.
func startsTurn(s *Sim, i int) bool {
	it := &s.Ctx[i]
	return it.Orig >= 0 && s.isPrompt(it)
}
