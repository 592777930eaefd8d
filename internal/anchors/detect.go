package anchors

import (
	"strings"

	"github.com/compactbench/compactbench/internal/transcript"
)

// Anchor is a detected anchor point (the seeds' AnchorPoint).
type Anchor struct {
	// Turn is the 0-based position of the anchor's turn in the evaluated
	// turn list (or in the window given to Evaluation.Flow).
	Turn int
	Type Type
	// Rule is the name of the rule that fired; "synthetic" for the fallback.
	Rule       string
	Weight     float64
	Confidence float64
	// Description is the rule's description with {files} replaced by the
	// files the turn modified.
	Description string
	// Timestamp is the turn's timestamp. The synthetic anchor has none: in
	// seed 000 it is stamped with the current time, which never equals a
	// turn's, so the weighted summary never renders it as [ANCHOR].
	Timestamp string
	Synthetic bool
}

// SyntheticRule is the Rule name of synthetic anchors.
const SyntheticRule = "synthetic"

// Flow is the seeds' ConversationFlow for a list of turns: the anchors, the
// synthetic anchor if one was needed, and the PreservationContext.
type Flow struct {
	// Anchors are the natural anchors in turn order, followed by the
	// synthetic anchor when there is one (seed 000 pushes it onto the list).
	Anchors []Anchor
	// Synthetic is the synthetic anchor, nil when a rule fired or the set
	// has no fallback.
	Synthetic *Anchor
	Context   PreservationContext
}

// Natural returns the anchors that rules detected (without the synthetic).
func (f *Flow) Natural() []Anchor {
	if f.Synthetic != nil {
		return f.Anchors[:len(f.Anchors)-1]
	}
	return f.Anchors
}

// Evaluate runs every rule of the set on every turn. Call it once per
// transcript (or per turn list); Flow then answers for any window of the
// turns without looking at their text again.
func (s *RuleSet) Evaluate(turns []transcript.Turn) *Evaluation {
	return s.program().evaluate(turns)[0]
}

// program compiles the set on first use.
func (s *RuleSet) program() *program {
	s.once.Do(func() { s.prog = compile(s) })
	return s.prog
}

// Flow is Evaluate(turns).Flow(0, len(turns)).
func (s *RuleSet) Flow(turns []transcript.Turn) Flow {
	return s.Evaluate(turns).Flow(0, len(turns))
}

// Suite evaluates several rule sets together, searching each text once per
// distinct test they share. It is safe for concurrent use.
type Suite struct {
	Sets []*RuleSet
	prog *program
}

// NewSuite compiles the sets into one suite.
func NewSuite(sets ...*RuleSet) *Suite {
	return &Suite{Sets: sets, prog: compile(sets...)}
}

// Evaluate evaluates every set of the suite on the turns, in suite order.
func (s *Suite) Evaluate(turns []transcript.Turn) []*Evaluation {
	return s.prog.evaluate(turns)
}

func (p *program) evaluate(turns []transcript.Turn) []*Evaluation {
	facts, fs := p.facts(turns)
	defer fs.release()
	ctx := &contexts{turns: turns} // the same for every set
	out := make([]*Evaluation, len(p.sets))
	var none text // the next prompt of a turn at the end of a window
	for k, cs := range p.sets {
		nr := len(cs.rules)
		e := &Evaluation{Set: cs.set, turns: turns, nrules: nr,
			matched: make([]bool, len(turns)*nr), fired: make([]int16, len(turns)), ctx: ctx}
		for i := range turns {
			e.fired[i] = p.fire(cs, &facts[i], e.matched[i*nr:(i+1)*nr])
		}
		if cs.usesNext {
			// What the set finds on a turn whose next prompt is not
			// recorded yet: the last turn of a window (Anchors).
			e.blind = make([]int16, len(turns))
			scratch := make([]bool, nr)
			if none.memo == nil {
				none = p.noText()
			}
			for i := range turns {
				b := facts[i]
				b.next = none
				e.blind[i] = p.fire(cs, &b, scratch)
			}
		}
		out[k] = e
	}
	return out
}

// fire evaluates every rule of cs on a turn's facts, recording in matched
// whether each rule's conditions held, and returns the rule that fires
// (-1 for none).
func (p *program) fire(cs *compiledSet, f *turnFacts, matched []bool) int16 {
	fired := int16(-1)
	for r, conds := range cs.rules {
		ok := true
		for _, c := range conds {
			if !p.holds(c, f) {
				ok = false
				break
			}
		}
		matched[r] = ok
		if ok && fired < 0 && !cs.set.Rules[r].BelowThreshold(cs.set) {
			fired = int16(r)
		}
	}
	return fired
}

// Evaluation is the outcome of one rule set on a list of turns. It keeps a
// reference to the turns (not a copy). It is not safe for concurrent use.
type Evaluation struct {
	Set     *RuleSet
	turns   []transcript.Turn
	nrules  int
	matched []bool
	fired   []int16
	// blind is fired for a turn whose next prompt is unknown; nil when no
	// rule of the set looks at the next turn.
	blind []int16
	// ctx is shared by the evaluations of one Suite.Evaluate call.
	ctx *contexts
	// desc caches, by turn, the description of the rule that fired there
	// (fired), filled on first use: a replay asks for the anchors of
	// overlapping windows at every compaction.
	desc []string
	// descDone marks the turns whose desc is filled.
	descDone []bool
}

// Len is the number of turns evaluated.
func (e *Evaluation) Len() int { return len(e.turns) }

// Matched reports whether rule r's conditions held on turn i, whatever its
// confidence and whatever rule fired first.
func (e *Evaluation) Matched(i, r int) bool { return e.matched[i*e.nrules+r] }

// Fired returns the index of the rule that fired on turn i, or -1.
func (e *Evaluation) Fired(i int) int { return int(e.fired[i]) }

// Anchors returns the natural anchors of turns[from:to], with Turn relative
// to from. The window's last turn is judged without its next prompt: in
// replay, that prompt comes after the compaction point, and a rule may not
// see the future.
func (e *Evaluation) Anchors(from, to int) []Anchor {
	var out []Anchor
	for i := from; i < to; i++ {
		r := e.fired[i]
		if i == to-1 && e.blind != nil {
			r = e.blind[i]
		}
		if r < 0 {
			continue
		}
		rule := e.Set.Rules[r]
		t := &e.turns[i]
		out = append(out, Anchor{
			Turn: i - from, Type: rule.Type, Rule: rule.Name, Weight: rule.Weight, Confidence: rule.Confidence,
			Description: e.describe(i, r), Timestamp: t.Timestamp,
		})
	}
	return out
}

// describe is rule r's description on turn i, cached when r is the rule
// that fired there (the blind rule of a window's last turn is described
// afresh).
func (e *Evaluation) describe(i int, r int16) string {
	rule := e.Set.Rules[r]
	if r != e.fired[i] || !strings.Contains(rule.Description, "{files}") {
		return describe(rule.Description, &e.turns[i])
	}
	if e.desc == nil {
		e.desc, e.descDone = make([]string, len(e.turns)), make([]bool, len(e.turns))
	}
	if !e.descDone[i] {
		e.desc[i], e.descDone[i] = describe(rule.Description, &e.turns[i]), true
	}
	return e.desc[i]
}

// Flow builds the ConversationFlow of turns[from:to] (docs/strategies.md): the
// natural anchors, a synthetic anchor at the window's last turn when none
// fired and the set has a fallback, and the PreservationContext of the
// window. A turn's previous_error is the one it had in the evaluated list.
// The context comes from an index of the evaluated turns built once, so a
// window costs a pass over its files and goals only; its ErrorStates share
// the index's memory (read them, do not write them; appending copies).
func (e *Evaluation) Flow(from, to int) Flow {
	f := e.Detect(from, to)
	f.Context = e.ctx.fold(from, to)
	return f
}

// Detect is Flow without the PreservationContext (which costs a pass over
// the window's tool outputs).
func (e *Evaluation) Detect(from, to int) Flow {
	f := Flow{Anchors: e.Anchors(from, to)}
	if len(f.Anchors) == 0 && to > from && e.Set.Synthetic != nil {
		sp := e.Set.Synthetic
		desc := sp.Description
		if desc == "" {
			desc = "Synthetic anchor at conversation end"
		}
		f.Anchors = append(f.Anchors, Anchor{Turn: to - from - 1, Type: sp.Type, Rule: SyntheticRule,
			Weight: sp.Weight, Confidence: sp.Confidence, Description: desc, Synthetic: true})
		f.Synthetic = &f.Anchors[len(f.Anchors)-1]
	}
	return f
}

// describe fills a rule description's {files} with the files the turn
// modified.
func describe(desc string, t *transcript.Turn) string {
	if !strings.Contains(desc, "{files}") {
		return desc
	}
	var files []string
	seen := map[string]bool{}
	for _, c := range t.ToolCalls {
		if c.ToolKind() == transcript.ToolModify && c.Path != "" && !seen[c.Path] {
			seen[c.Path] = true
			files = append(files, c.Path)
		}
	}
	s := strings.Join(files, ", ")
	if s == "" {
		s = "(no file)"
	}
	return strings.ReplaceAll(desc, "{files}", s)
}
