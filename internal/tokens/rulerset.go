package tokens

import (
	"fmt"
	"sync"
)

// Generation is a tokenizer generation of a model table, as a typed key:
// its place in the table's Generations() (the reference generation is 0).
type Generation int

// RulerSpec is what a run chose about counting tokens, already parsed from
// its flags: the rulers the calls table measures, the metric ruler, how the
// overhead is anchored, the calibration factors and the model table.
type RulerSpec struct {
	// Measured are the calls table's rulers (nil: DefaultNames()); they
	// are kept in Names() order.
	Measured []RulerID
	// Metric is the ruler every figure counts with.
	Metric RulerID
	// Overhead is how the calls table anchors the fixed overhead.
	Overhead Anchoring
	// Calibration replaces the shipped factors (nil: the shipped ones).
	Calibration *FactorSet
	// Models is the model table (nil: the shipped one).
	Models *Models
}

// RulerSet is a run's rulers resolved once, before any transcript is read:
// for every tokenizer generation of the model table, every registered
// ruler, the calibrated one with that generation's factors (fitted, or
// derived from the reference generation's). A transcript picks its
// generation by the model name it records (Generation) and is handed
// values: nothing is looked up by ruler or generation name afterwards.
// A RulerSet is immutable and safe for concurrent use.
type RulerSet struct {
	measured []RulerID
	metric   RulerID
	overhead Anchoring
	models   *Models
	gens     []GenRulers
	// entryGen is the generation of each model table entry, by entry.
	entryGen []Generation
}

// GenRulers are the rulers of one tokenizer generation.
type GenRulers struct {
	// Name is the generation's name in the model table (the tokenizer
	// column).
	Name string
	// Factors are the calibrated ruler's factors for the generation.
	Factors *Factors
	// Measured are the calls table's rulers, in Names() order; Metric is
	// the metric ruler (one of all, shared).
	Measured []*Ruler
	Metric   *Ruler
	all      [NumRulers]*Ruler
}

// Ruler returns the generation's ruler of a registered ID (nil for an ID
// outside the registry).
func (g *GenRulers) Ruler(id RulerID) *Ruler {
	if id < 0 || int(id) >= NumRulers {
		return nil
	}
	return g.all[id]
}

// NewRulerSet resolves a spec into rulers for every generation of its
// model table. It fails only on an ID outside the registry.
func NewRulerSet(spec RulerSpec) (*RulerSet, error) {
	measured := spec.Measured
	if len(measured) == 0 {
		measured = defaultIDs()
	}
	if spec.Metric < 0 || int(spec.Metric) >= NumRulers {
		return nil, fmt.Errorf("metric ruler %d is not registered", spec.Metric)
	}
	var want [NumRulers]bool
	for _, id := range measured {
		if id < 0 || int(id) >= NumRulers {
			return nil, fmt.Errorf("ruler %d is not registered", id)
		}
		want[id] = true
	}
	s := &RulerSet{metric: spec.Metric, overhead: spec.Overhead, models: spec.Models}
	for id := range NumRulers { // Names() order, without duplicates
		if want[id] {
			s.measured = append(s.measured, RulerID(id))
		}
	}
	cal := spec.Calibration
	if cal == nil {
		cal = DefaultFactorSet()
	}
	gens := spec.Models.Generations()
	byName := make(map[string]Generation, len(gens))
	for i, name := range gens {
		byName[name] = Generation(i)
		f, _ := cal.For(name, spec.Models)
		g := GenRulers{Name: name, Factors: f}
		for id := range NumRulers {
			g.all[id] = ByID(RulerID(id), f)
		}
		for _, id := range s.measured {
			g.Measured = append(g.Measured, g.all[id])
		}
		g.Metric = g.all[spec.Metric]
		s.gens = append(s.gens, g)
	}
	table := spec.Models
	if table == nil {
		table = DefaultModels()
	}
	s.entryGen = make([]Generation, len(table.Entries))
	for i := range table.Entries {
		s.entryGen[i] = byName[table.Entries[i].Tokenizer] // ParseModels checked it is listed
	}
	return s, nil
}

// defaultIDs are DefaultNames() as IDs.
func defaultIDs() []RulerID { return []RulerID{RulerChars4, RulerChars4Msg, RulerCalibrated} }

// defaultRulerSet is built once, when first needed (not at process start).
var defaultRulerSet = sync.OnceValue(func() *RulerSet {
	s, _ := NewRulerSet(RulerSpec{Metric: RulerCalibrated, Overhead: AnchorSegments})
	return s
})

// DefaultRulerSet is the set of a run without ruler flags: the default
// rulers measured, calibrated as the metric with the shipped factors,
// segment anchoring, on the shipped model table (shared).
func DefaultRulerSet() *RulerSet { return defaultRulerSet() }

// Generation is the tokenizer generation of a model, by the model name a
// transcript or call records (data, matched against the table's
// patterns; the reference generation when no entry matches).
func (s *RulerSet) Generation(model string) Generation {
	table := s.models
	if table == nil {
		table = DefaultModels()
	}
	if i := table.index(model); i >= 0 {
		return s.entryGen[i]
	}
	return 0 // the fallback model's tokenizer is the reference generation
}

// Of returns the rulers of a generation.
func (s *RulerSet) Of(g Generation) *GenRulers { return &s.gens[g] }

// ForModel returns the rulers of a model's generation (Of(Generation(model))).
func (s *RulerSet) ForModel(model string) *GenRulers { return s.Of(s.Generation(model)) }

// Measured are the calls table's rulers, in Names() order.
func (s *RulerSet) Measured() []RulerID { return s.measured }

// Metric is the metric ruler.
func (s *RulerSet) Metric() RulerID { return s.metric }

// Overhead is how the calls table anchors the fixed overhead.
func (s *RulerSet) Overhead() Anchoring { return s.overhead }

// Models is the model table the set was resolved on (nil: the shipped one).
func (s *RulerSet) Models() *Models { return s.models }
