package aggregate

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/compactbench/compactbench/internal/compaction"
	"github.com/compactbench/compactbench/internal/figures"
	"github.com/compactbench/compactbench/internal/tokens"
)

// GateFigure is a figure of summary.json the gate compares with the
// baseline: higher or lower is better, and by default it may worsen by at
// most Default (absolute: a share, a ratio or a count).
type GateFigure struct {
	Name string
	// Scope is what the figure is per: strategy, ruler, rule set or corpus.
	Scope string
	// HigherBetter says which way is an improvement.
	HigherBetter bool
	// Count marks integer figures.
	Count   bool
	Default float64
	Doc     string
}

// GateFigures are the gated figures, in report order: the figures
// registry's gated figures.
var GateFigures = gateFigures()

func gateFigures() []GateFigure {
	var out []GateFigure
	for _, f := range figures.Gated() {
		out = append(out, GateFigure{Name: f.Name, Scope: string(f.Scope), HigherBetter: f.HigherBetter(),
			Count: f.Count(), Default: f.Gate.Tolerance, Doc: f.Caption})
	}
	return out
}

func gateFigure(name string) (GateFigure, bool) {
	for _, f := range GateFigures {
		if f.Name == name {
			return f, true
		}
	}
	return GateFigure{}, false
}

func gateFigureNames() string {
	names := make([]string, len(GateFigures))
	for i, f := range GateFigures {
		names[i] = f.Name
	}
	return strings.Join(names, ", ")
}

// Tolerances are how much each figure may worsen against the baseline:
// figure → allowed worsening, overridden per strategy. A figure turned off
// is not compared.
type Tolerances struct {
	figures    map[string]tolerance
	strategies map[string]map[string]tolerance
}

type tolerance struct {
	max float64
	off bool
}

// DefaultTolerances returns GateFigures' defaults.
func DefaultTolerances() *Tolerances {
	t := &Tolerances{figures: map[string]tolerance{}, strategies: map[string]map[string]tolerance{}}
	for _, f := range GateFigures {
		t.figures[f.Name] = tolerance{max: f.Default}
	}
	return t
}

// For returns a figure's tolerance for a strategy ("" for other scopes) and
// whether the figure is compared.
func (t *Tolerances) For(strategy, figure string) (float64, bool) {
	if s, ok := t.strategies[strategy][figure]; ok && strategy != "" {
		return s.max, !s.off
	}
	f := t.figures[figure]
	return f.max, !f.off
}

// parseTolerance reads "0.02" or "off".
func parseTolerance(v string) (tolerance, error) {
	if strings.TrimSpace(v) == "off" {
		return tolerance{off: true}, nil
	}
	x, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
	if err != nil || math.IsNaN(x) || math.IsInf(x, 0) || x < 0 {
		return tolerance{}, fmt.Errorf("want a number ≥ 0 or off, got %q", v)
	}
	return tolerance{max: x}, nil
}

// Set changes one tolerance: "need_recall=0.03", "mask.low_compression_share=off".
func (t *Tolerances) Set(key, value string) error {
	tol, err := parseTolerance(value)
	if err != nil {
		return fmt.Errorf("%s: %w", key, err)
	}
	strategy, figure, scoped := strings.Cut(key, ".")
	if !scoped {
		figure, strategy = key, ""
	}
	f, ok := gateFigure(figure)
	if !ok {
		return fmt.Errorf("%s: unknown figure %q (known: %s)", key, figure, gateFigureNames())
	}
	if !scoped {
		t.figures[figure] = tol
		return nil
	}
	if f.Scope != "strategy" {
		return fmt.Errorf("%s: %s is a %s figure, not a strategy's", key, figure, f.Scope)
	}
	if _, err := compaction.SpecByID(strategy); err != nil {
		return fmt.Errorf("%s: %w", key, err)
	}
	if t.strategies[strategy] == nil {
		t.strategies[strategy] = map[string]tolerance{}
	}
	t.strategies[strategy][figure] = tol
	return nil
}

// ParseTolerances reads a tolerances file over the defaults:
//
//	need_recall: 0.02          # may drop by at most 0.02
//	overflows: 0               # may not rise
//	evidence_f1: off           # not compared
//	strategies:
//	  mask: {low_compression_share: off}
//
// Decoding is strict: an unknown figure or strategy, or a bad value, is an
// error naming origin and the line.
func ParseTolerances(data []byte, origin string) (*Tolerances, error) {
	t := DefaultTolerances()
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, fmt.Errorf("%s: %w", origin, err)
	}
	if doc.Kind == 0 || len(doc.Content) == 0 {
		return t, nil // an empty file keeps the defaults
	}
	root := doc.Content[0]
	if root.Kind != yaml.MappingNode {
		return nil, fmt.Errorf("%s:%d: want a mapping of figure: tolerance", origin, root.Line)
	}
	var errs []error
	scalar := func(n *yaml.Node, key string) {
		if n.Kind != yaml.ScalarNode {
			errs = append(errs, fmt.Errorf("%s:%d: %s: want a number or off", origin, n.Line, key))
			return
		}
		if err := t.Set(key, n.Value); err != nil {
			errs = append(errs, fmt.Errorf("%s:%d: %w", origin, n.Line, err))
		}
	}
	for i := 0; i+1 < len(root.Content); i += 2 {
		k, v := root.Content[i], root.Content[i+1]
		if k.Value != "strategies" {
			scalar(v, k.Value)
			continue
		}
		if v.Kind != yaml.MappingNode {
			errs = append(errs, fmt.Errorf("%s:%d: strategies: want a mapping of strategy: {figure: tolerance}", origin, v.Line))
			continue
		}
		for j := 0; j+1 < len(v.Content); j += 2 {
			sk, sv := v.Content[j], v.Content[j+1]
			if sv.Kind != yaml.MappingNode {
				errs = append(errs, fmt.Errorf("%s:%d: strategies.%s: want a mapping of figure: tolerance", origin, sv.Line, sk.Value))
				continue
			}
			for m := 0; m+1 < len(sv.Content); m += 2 {
				scalar(sv.Content[m+1], sk.Value+"."+sv.Content[m].Value)
			}
		}
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return t, nil
}

// GateCheck is one compared figure.
type GateCheck struct {
	Figure GateFigure
	// Of names the strategy, ruler or rule set ("" for the corpus).
	Of                string
	Baseline, Current *float64
	// Allowed is the tolerance; Pass is the verdict; Note says why when
	// a value is missing.
	Allowed float64
	Pass    bool
	Note    string
	// Missing marks a strategy, ruler or rule set of the baseline that the
	// current run lacks (Figure.Name is then its scope).
	Missing bool
}

// Worsening is how much the figure got worse (negative: better), or nil.
func (c *GateCheck) Worsening() *float64 {
	if c.Baseline == nil || c.Current == nil {
		return nil
	}
	w := *c.Current - *c.Baseline
	if c.Figure.HigherBetter {
		w = -w
	}
	return &w
}

// GateResult is the gate's verdict over every compared figure.
type GateResult struct {
	Checks []GateCheck
	// Notes say what differs between the runs beyond the figures (config,
	// inputs, corpus size, what only one run has).
	Notes []string
}

// Failures counts the failed checks.
func (g *GateResult) Failures() int {
	n := 0
	for _, c := range g.Checks {
		if !c.Pass {
			n++
		}
	}
	return n
}

// ReadSummary parses summary.json and checks that this version of
// compactbench can compare it.
func ReadSummary(data []byte, origin string) (*Summary, error) {
	var s Summary
	if err := json.Unmarshal(data, &s); err != nil {
		return nil, fmt.Errorf("%s: not a summary.json: %w", origin, err)
	}
	if s.SchemaVersion == 0 || s.Meta.Tool != "compactbench" {
		return nil, fmt.Errorf("%s: not a compactbench summary.json (no schema_version or tool)", origin)
	}
	if s.SchemaVersion != SchemaVersion {
		return nil, fmt.Errorf("%s: schema_version %d, this compactbench reads %d (refresh the baseline: make baseline)", origin, s.SchemaVersion, SchemaVersion)
	}
	return &s, nil
}

// gateEps absorbs float noise in the comparison.
const gateEps = 1e-9

// Gate compares current with baseline under the tolerances: per strategy,
// per ruler, per rule set and for the corpus, then notes what else differs.
func Gate(baseline, current *Summary, tol *Tolerances) *GateResult {
	g := &gater{GateResult: &GateResult{}, tol: tol}
	g.strategies(baseline, current)
	g.rulers(baseline, current)
	g.ruleSets(baseline, current)
	pf, _ := gateFigure(figures.Problems)
	bp, cp := float64(baseline.Corpus.Problems), float64(current.Corpus.Problems)
	g.check(pf, "", "", &bp, &cp)
	g.notes(baseline, current)
	return g.GateResult
}

// gater collects a gate's checks.
type gater struct {
	*GateResult
	tol *Tolerances
}

// check compares one figure of one strategy, ruler or rule set (of).
func (g *gater) check(f GateFigure, of, strategy string, b, c *float64) {
	allowed, on := g.tol.For(strategy, f.Name)
	if !on {
		return
	}
	ch := GateCheck{Figure: f, Of: of, Baseline: b, Current: c, Allowed: allowed, Pass: true}
	switch {
	case b == nil && c == nil:
		ch.Note = "n/a in both"
	case b == nil:
		ch.Note = "new"
	case c == nil:
		ch.Pass, ch.Note = false, "missing in the current run"
	default:
		ch.Pass = *ch.Worsening() <= allowed+gateEps
	}
	g.Checks = append(g.Checks, ch)
}

// missing fails a strategy, ruler or rule set the current run lacks.
func (g *gater) missing(scope, of string) {
	g.Checks = append(g.Checks, GateCheck{Figure: GateFigure{Name: scope, Scope: scope}, Of: of, Note: "missing in the current run", Missing: true})
}

func (g *gater) note(format string, args ...any) {
	g.Notes = append(g.Notes, fmt.Sprintf(format, args...))
}

// strategies checks every strategy figure, in compaction.Specs order, then
// unknown ids sorted.
func (g *gater) strategies(baseline, current *Summary) {
	for _, id := range orderedStrategies(baseline.Strategies) {
		b, c := baseline.Strategies[id], current.Strategies[id]
		if c == nil {
			g.missing("strategy", id)
			continue
		}
		for _, f := range GateFigures {
			if f.Scope == string(figures.Strategy) {
				g.check(f, id, id, b.Value(f.Name), c.Value(f.Name))
			}
		}
	}
	for _, id := range orderedStrategies(current.Strategies) {
		if baseline.Strategies[id] == nil {
			g.note("strategy %s is new in the current run: not gated", id)
		}
	}
}

// rulers checks every ruler's median error.
func (g *gater) rulers(baseline, current *Summary) {
	rf, _ := gateFigure(figures.RulerMedianError)
	for _, name := range rulerNames(baseline) {
		c := RulerMedian(current, name)
		if current.Rulers == nil || current.Rulers.Measured[name] == nil {
			g.missing("ruler", name)
			continue
		}
		g.check(rf, name, "", RulerMedian(baseline, name), c)
	}
	for _, name := range rulerNames(current) {
		if baseline.Rulers == nil || baseline.Rulers.Measured[name] == nil {
			g.note("ruler %s is new in the current run: not gated", name)
		}
	}
}

// ruleSets checks every rule set's F1 against gold and evidence labels.
func (g *gater) ruleSets(baseline, current *Summary) {
	gf, _ := gateFigure(figures.GoldF1)
	ef, _ := gateFigure(figures.EvidenceF1)
	for _, b := range baseline.Anchors {
		c := RuleSet(current, b.Name)
		if c == nil {
			g.missing("rule set", b.Name)
			continue
		}
		g.check(gf, b.Name, "", F1(b.Gold), F1(c.Gold))
		g.check(ef, b.Name, "", F1(b.Evidence), F1(c.Evidence))
	}
	for _, c := range current.Anchors {
		if RuleSet(baseline, c.Name) == nil {
			g.note("rule set %s is new in the current run: not gated", c.Name)
		}
	}
}

// notes says what differs between the runs beyond the figures.
func (g *gater) notes(baseline, current *Summary) {
	if baseline.Meta.ConfigHash != current.Meta.ConfigHash {
		g.note("config hash differs (baseline %s, current %s): rulers, rule sets, labels or strategy parameters changed",
			baseline.Meta.ConfigHash, current.Meta.ConfigHash)
	}
	if strings.Join(baseline.Meta.Inputs, " ") != strings.Join(current.Meta.Inputs, " ") {
		g.note("inputs differ: baseline %s, current %s", strings.Join(baseline.Meta.Inputs, " "), strings.Join(current.Meta.Inputs, " "))
	}
	if baseline.Corpus.Transcripts != current.Corpus.Transcripts || baseline.Corpus.Lines != current.Corpus.Lines {
		g.note("the corpus differs: %d transcripts / %d lines in the baseline, %d / %d now",
			baseline.Corpus.Transcripts, baseline.Corpus.Lines, current.Corpus.Transcripts, current.Corpus.Lines)
	}
	for _, b := range baseline.Anchors {
		if c := RuleSet(current, b.Name); c != nil && c.Hash != b.Hash {
			g.note("rule set %s changed (source hash %s → %s)", b.Name, b.Hash, c.Hash)
		}
	}
}

func orderedStrategies(m Strategies) []string {
	var out []string
	seen := map[string]bool{}
	for _, s := range compaction.Specs() {
		if m[s.ID] != nil {
			out = append(out, s.ID)
			seen[s.ID] = true
		}
	}
	var rest []string
	for id := range m {
		if !seen[id] {
			rest = append(rest, id)
		}
	}
	sort.Strings(rest)
	return append(out, rest...)
}

// rulerNames lists a summary's measured rulers in tokens.Names order.
func rulerNames(s *Summary) []string {
	var out []string
	if s.Rulers == nil {
		return nil
	}
	for _, n := range tokens.Names() {
		if s.Rulers.Measured[n] != nil {
			out = append(out, n)
		}
	}
	return out
}

// RulerMedian is the median |err| over calls of ruler name in s, or nil when
// the run did not measure that ruler or measured no call.
func RulerMedian(s *Summary, name string) *float64 {
	if s.Rulers == nil || s.Rulers.Measured[name] == nil {
		return nil
	}
	v := s.Rulers.Measured[name].Calls.Median
	if math.IsNaN(v) {
		return nil
	}
	return &v
}

// RuleSet is the named rule set's aggregates, or nil.
func RuleSet(s *Summary, name string) *RuleSetSummary {
	for i := range s.Anchors {
		if s.Anchors[i].Name == name {
			return &s.Anchors[i]
		}
	}
	return nil
}

// F1 is the scores' F1, nil without scores.
func F1(ls *LabelScores) *float64 {
	if ls == nil {
		return nil
	}
	return ls.F1
}
