package analysis

import "github.com/compactbench/compactbench/internal/compaction"

// Strategy is an enabled strategy resolved for replay: its spec, its
// parameters and the rule set they name ("" for a strategy without
// anchors; the runs table's rule_set).
type Strategy struct {
	Spec    compaction.Spec
	Params  any
	RuleSet string
}

// ResolveStrategies lists the strategies a configuration enables, in
// compaction.Specs order, with their parameters and rule set names
// (defaults when cc is nil). internal/plan calls it once per
// configuration, so a replay never looks a strategy up by its id.
func ResolveStrategies(cc *compaction.Config) []Strategy {
	if cc == nil {
		cc = compaction.DefaultConfig()
	}
	var out []Strategy
	for _, spec := range cc.Enabled() {
		p := cc.Params[spec.ID]
		out = append(out, Strategy{Spec: spec, Params: p, RuleSet: compaction.RuleSetOf(p)})
	}
	return out
}

// strategies are the config's resolved strategies, resolved here when the
// config was built without the plan.
func (c *Config) strategies() []Strategy {
	if c.Strategies == nil {
		return ResolveStrategies(c.Compaction)
	}
	return c.Strategies
}
