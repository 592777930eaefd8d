package figures

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"

	"github.com/compactbench/compactbench/internal/analysis"
)

// Set is one subject's (a strategy's) values of every registered figure of
// the Strategy scope: filled by AddRun and AddEvent, finished by Finish,
// and written to and read from JSON as summary.json's object of figures in
// registry order. The zero value is an empty set.
type Set struct {
	vals    []float64
	defined []bool
	labels  []string
	// samples are the per-item values of the Median figures, in memory
	// bounded whatever their number.
	samples sampleLog
}

func (s *Set) init() {
	if s.vals == nil {
		n := len(registry)
		s.vals, s.defined, s.labels = make([]float64, n), make([]bool, n), make([]string, n)
	}
}

// AddRun folds one replay into the set's Run figures.
func (s *Set) AddRun(r *analysis.RunRow) {
	s.init()
	for i := range registry {
		f := &registry[i]
		switch {
		case f.RunLabel != nil:
			s.labels[i] = f.RunLabel(r)
		case f.Run != nil:
			if v, ok := f.Run(r); ok {
				s.fold(i, f, v)
			}
		}
	}
}

// AddEvent folds one compaction event into the set's Event figures.
func (s *Set) AddEvent(e *analysis.EventRow) {
	s.init()
	for i := range registry {
		f := &registry[i]
		if f.Event != nil {
			if v, ok := f.Event(e); ok {
				s.fold(i, f, v)
			}
		}
	}
}

func (s *Set) fold(i int, f *Figure, v float64) {
	if f.Agg == Median {
		s.samples.add(i, v)
		return
	}
	s.vals[i] += v
}

// Finish computes the aggregates that need every item: medians (the
// values tokens.Quantile gives over every item's value) and pooled ratios
// (totals are computed when read). If the medians' values cannot be read
// back from their temporary file, the medians are undefined and Err says
// why.
func (s *Set) Finish() {
	s.init()
	med, err := s.samples.quantiles(0.5)
	if err != nil {
		s.samples.err = err
	}
	for i := range registry {
		f := &registry[i]
		switch f.Agg {
		case Sum:
			s.defined[i] = true
		case Median:
			v := math.NaN()
			if err == nil {
				v = med[i]
			}
			s.vals[i], s.defined[i] = v, !math.IsNaN(v)
		}
	}
	s.derive(false)
}

// Err is the first error reading back the values behind the medians (nil
// for none): in Finish, which then left the medians undefined, or in
// EachSample.
func (s *Set) Err() error {
	if s == nil {
		return nil
	}
	return s.samples.err
}

// derive computes the Pooled figures from the others (only the
// hidden ones when hiddenOnly: the rest came from JSON).
func (s *Set) derive(hiddenOnly bool) {
	for i := range registry {
		f := &registry[i]
		if hiddenOnly && !f.Hidden {
			continue
		}
		switch f.Agg {
		case Pooled:
			n, d := s.vals[must(f.Num)], s.vals[must(f.Den)]
			if d > 0 {
				s.vals[i], s.defined[i] = n/d, true
			}
		}
	}
}

// Value is the named figure's value, nil when it is undefined (a median
// over nothing, a ratio over zero; sums and totals are always defined). It panics on an unregistered name.
func (s *Set) Value(name string) *float64 {
	i := must(name)
	if registry[i].Agg == Total {
		var t float64
		for _, p := range registry[i].Parts {
			t += *s.Value(p)
		}
		return &t
	}
	if registry[i].Agg == Sum {
		var v float64
		if s != nil && s.vals != nil {
			v = s.vals[i]
		}
		return &v
	}
	if s == nil || s.vals == nil || !s.defined[i] {
		return nil
	}
	v := s.vals[i]
	return &v
}

// Count is the named figure as an integer (0 when undefined).
func (s *Set) Count(name string) int64 {
	if v := s.Value(name); v != nil {
		return int64(*v)
	}
	return 0
}

// Float is the named figure (0 when undefined).
func (s *Set) Float(name string) float64 {
	if v := s.Value(name); v != nil {
		return *v
	}
	return 0
}

// Label is the named label figure.
func (s *Set) Label(name string) string {
	i := must(name)
	if s == nil || s.labels == nil {
		return ""
	}
	return s.labels[i]
}

// EachSample calls fn with every per-item value of a Median figure, in no
// particular order (none for a set read from JSON). An error reading them
// back stops it, is returned and is kept for Err.
func (s *Set) EachSample(name string, fn func(v float64)) error {
	i := must(name)
	if s == nil {
		return nil
	}
	return s.samples.each(i, fn)
}

// Set sets the named figure (nil: undefined); for tests and readers.
func (s *Set) Set(name string, v *float64) {
	s.init()
	i := must(name)
	s.vals[i], s.defined[i] = 0, v != nil
	if v != nil {
		s.vals[i] = *v
	}
}

// SetLabel sets the named label figure.
func (s *Set) SetLabel(name, v string) {
	s.init()
	s.labels[must(name)] = v
}

// MarshalJSON writes the visible Strategy figures in registry order:
// counts as integers, undefined values as null, an empty label left out.
func (s *Set) MarshalJSON() ([]byte, error) {
	s.init()
	var b bytes.Buffer
	b.WriteByte('{')
	first := true
	for i := range registry {
		f := &registry[i]
		if f.Hidden || f.Scope != Strategy {
			continue
		}
		var v any
		switch {
		case f.Unit == Label:
			if s.labels[i] == "" {
				continue
			}
			v = s.labels[i]
		case !s.defined[i]:
			v = nil
		case f.Unit == Count:
			v = int64(s.vals[i])
		default:
			v = s.vals[i]
		}
		data, err := json.Marshal(v)
		if err != nil {
			return nil, fmt.Errorf("figure %s: %w", f.Name, err)
		}
		if !first {
			b.WriteByte(',')
		}
		first = false
		name, _ := json.Marshal(f.Name)
		b.Write(name)
		b.WriteByte(':')
		b.Write(data)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// UnmarshalJSON reads what MarshalJSON writes; unknown keys are ignored
// (a baseline from another version), a missing count is 0, a missing
// ratio undefined.
func (s *Set) UnmarshalJSON(data []byte) error {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(data, &m); err != nil {
		return err
	}
	*s = Set{}
	s.init()
	for i := range registry {
		f := &registry[i]
		if f.Hidden || f.Scope != Strategy {
			continue
		}
		raw, ok := m[f.Name]
		if f.Agg == Sum {
			s.defined[i] = true
		}
		if !ok || string(raw) == "null" {
			continue
		}
		var err error
		if f.Unit == Label {
			err = json.Unmarshal(raw, &s.labels[i])
		} else {
			err = json.Unmarshal(raw, &s.vals[i])
			s.defined[i] = err == nil
		}
		if err != nil {
			return fmt.Errorf("figure %s: %w", f.Name, err)
		}
	}
	s.derive(true)
	return nil
}
