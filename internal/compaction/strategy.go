package compaction

import (
	"fmt"
	"strings"
)

// Strategy is one compaction policy replaying one transcript. It may keep
// state across rounds (its previous summary, cumulative file lists).
type Strategy interface {
	// Trigger reports whether to compact before the upcoming call, and the
	// measure it decided on (its own count, in its own ruler).
	Trigger(s *Sim) (fire bool, measure int)
	// Compact returns the compacted context. It must not modify s.Ctx in
	// place: it builds a new slice, not backed by s.Ctx's array, which the
	// replay rewrites when it installs the result (items may be shared).
	Compact(s *Sim) Outcome
}

// Outcome is what a compaction produced.
type Outcome struct {
	// Ctx is the new context.
	Ctx []Item
	// Action names what was done (compact, prune, mask, truncate...).
	Action string
	// Summary is the text the strategy wrote, if any.
	Summary string
	// SummarizerInput is what a summarizer model would have read, in metric
	// tokens (0 when no model is called).
	SummarizerInput int
	Anchor          AnchorInfo
	// Skip means nothing could be compacted: no event is recorded.
	Skip bool
	// same, when > 0, says the first same items of Ctx are the context's,
	// unchanged (replace then need not compare them).
	same int
}

// AnchorInfo says how an anchor-based selection went.
type AnchorInfo struct {
	Kind string // natural | synthetic | none
	Type string
	Rule string
	Used bool
}

// Spec describes a strategy: its stable id (CLI flags, exports), its source,
// and how to build it from its parameters.
type Spec struct {
	ID     string
	Source string
	Doc    string
	// Params returns a fresh copy of the default parameters: a pointer to a
	// struct whose yaml tags name them.
	Params func() any
	// New builds the strategy for one transcript from its parameters.
	New func(params any) Strategy
}

// specs are the strategies, in docs/strategies.md order; each file registers its own.
var specs []Spec

func register(s Spec) { specs = append(specs, s) }

// order is docs/strategies.md's order of strategy ids.
var order = []string{"codelet", "codelet-raw", "codelet-budget", "fspec", "fspec-raw", "fspec-budget", "structured", "window", "mask", "prune", "codex", "truncate", "recorded"}

// Specs returns every strategy, in docs/strategies.md order.
func Specs() []Spec {
	out := make([]Spec, 0, len(specs))
	for _, id := range order {
		for _, s := range specs {
			if s.ID == id {
				out = append(out, s)
			}
		}
	}
	for _, s := range specs {
		found := false
		for _, id := range order {
			found = found || s.ID == id
		}
		if !found {
			out = append(out, s)
		}
	}
	return out
}

// SpecByID finds a strategy.
func SpecByID(id string) (Spec, error) {
	for _, s := range specs {
		if s.ID == id {
			return s, nil
		}
	}
	var ids []string
	for _, s := range Specs() {
		ids = append(ids, s.ID)
	}
	return Spec{}, fmt.Errorf("unknown strategy %q (known: %s)", id, strings.Join(ids, ", "))
}
