package compaction

import "strconv"

// TriggerRuler is implemented by strategies whose trigger compares one
// measure with a limit: it names the measure and gives the limit for the
// upcoming call, so events and reports can say why a strategy fired (or
// why it never did).
type TriggerRuler interface {
	// TriggerRule returns what the trigger measures, in words, and the
	// limit the measure must exceed (or reach) for the trigger to fire.
	TriggerRule(s *Sim) (measure string, limit int)
}

// TriggerRule implementations: each says what its Trigger compares.

// TriggerRule: effective tokens against Threshold × window.
func (a *anchorPoint) TriggerRule(s *Sim) (string, int) {
	m := "prompt"
	if a.p.CacheDiscount != 0 {
		m = "prompt − " + strconv.FormatFloat(a.p.CacheDiscount, 'g', -1, 64) + "×cache read"
	}
	return m, int(a.p.Threshold * float64(s.Window))
}

// TriggerRule: the prompt against TriggerFraction × window.
func (c *codex) TriggerRule(s *Sim) (string, int) {
	return "prompt", int(c.p.TriggerFraction * float64(s.Window))
}

// TriggerRule: the prompt against window − Reserve.
func (st *structured) TriggerRule(s *Sim) (string, int) { return "prompt", s.Window - st.p.Reserve }

// TriggerRule: the prompt against TriggerFraction × window.
func (t *truncate) TriggerRule(s *Sim) (string, int) {
	return "prompt", int(t.p.TriggerFraction * float64(s.Window))
}

// TriggerRule: seed 004's estimate against its threshold.
func (w *window) TriggerRule(s *Sim) (string, int) { return w.p.Ruler + " estimate", w.threshold(s) }

// TriggerRule: unmasked tool outputs against Keep.
func (m *mask) TriggerRule(*Sim) (string, int) { return "unmasked tool outputs", m.p.Keep }

// TriggerRule: tokens a prune would free against Minimum (or the prompt
// against window − OutputReserve).
func (p *prune) TriggerRule(*Sim) (string, int) { return "freeable tool-output tokens", p.p.Minimum }

// triggerReason says in words why a compaction happened.
func triggerReason(st Strategy, s *Sim, measure int) string {
	tr, ok := st.(TriggerRuler)
	if !ok {
		return "measure " + strconv.Itoa(measure)
	}
	name, limit := tr.TriggerRule(s)
	if p, isPrune := st.(*prune); isPrune && measure <= limit && p.overflow(s) {
		return "prompt " + strconv.Itoa(s.Prompt()) + ", limit window − " + strconv.Itoa(p.p.OutputReserve)
	}
	// Concatenated, not formatted: mask says why before nearly every call.
	return name + " " + strconv.Itoa(measure) + ", limit " + strconv.Itoa(limit)
}
