package compaction

import (
	"github.com/compactbench/compactbench/internal/anchors"
)

// evaluation returns a rule set's evaluation of the recording's turns,
// computed once per transcript and shared by every strategy.
func (sh *Shared) evaluation(name string) (*anchors.Evaluation, error) {
	if e, ok := sh.evals[name]; ok {
		return e, nil
	}
	set, err := sh.ruleSet(name)
	if err != nil {
		return nil, err
	}
	e := set.Evaluate(sh.Turns)
	if sh.evals == nil {
		sh.evals = map[string]*anchors.Evaluation{}
	}
	sh.evals[name] = e
	return e, nil
}

// ShareEvaluation gives the replay an evaluation of the recording's turns
// (sh.Turns) that the caller made, by a suite of rule sets, so that the
// strategies naming its set do not evaluate the turns again. It is kept only
// when its set is the one the set's name resolves to (set RuleSets first).
func (sh *Shared) ShareEvaluation(e *anchors.Evaluation) {
	if set, err := sh.ruleSet(e.Set.Name); err != nil || set != e.Set {
		return
	}
	if sh.evals == nil {
		sh.evals = map[string]*anchors.Evaluation{}
	}
	sh.evals[e.Set.Name] = e
}

// ruleSet resolves a rule set: one the caller supplied, or a built-in.
func (sh *Shared) ruleSet(name string) (*anchors.RuleSet, error) {
	if rs, ok := sh.RuleSets[name]; ok {
		return rs, nil
	}
	return anchors.Builtin(name)
}

// anchorDescriptions returns the descriptions of the anchors a rule set
// finds in the recorded turns that msgs hold.
func anchorDescriptions(s *Sim, rules string, msgs []Item) []string {
	e, err := s.evaluation(rules)
	if err != nil {
		return nil
	}
	first, last := -1, -1
	for _, it := range msgs {
		if it.Orig >= 0 {
			t := s.TurnOf[it.Orig]
			if first < 0 {
				first = t
			}
			last = t
		}
	}
	if first < 0 {
		return nil
	}
	var out []string
	for _, a := range e.Anchors(first, last+1) {
		out = append(out, a.Description)
	}
	return out
}
