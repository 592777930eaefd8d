package compaction

import (
	"math"
	"sort"
	"strconv"

	"github.com/compactbench/compactbench/internal/tokens"
	"github.com/compactbench/compactbench/internal/transcript"
)

// PruneParams configure opencode's pruning and overflow compaction.
type PruneParams struct {
	// Protect is the newest tool output (tokens) never pruned.
	Protect int `yaml:"protect"`
	// Minimum is how much must be freed for a prune to happen.
	Minimum int `yaml:"minimum"`
	// SkipTurns are the newest user turns whose outputs are never pruned.
	SkipTurns int `yaml:"skip_turns"`
	// OutputReserve is kept free for the answer: overflow is prompt >
	// window − OutputReserve (opencode: min(20,000, max output)).
	OutputReserve int `yaml:"output_reserve"`
	// Placeholder replaces a pruned output.
	Placeholder string `yaml:"placeholder"`
	// Ruler estimates tool outputs (opencode: chars/4).
	Ruler string `yaml:"ruler"`
}

func init() {
	register(Spec{
		ID: "prune", Source: "opencode",
		Doc: "clear old tool outputs beyond a protected 40k-token tail when at least 20k can be freed, then summarize if still over",
		Params: func() any {
			return &PruneParams{Protect: 40_000, Minimum: 20_000, SkipTurns: 2, OutputReserve: 20_000,
				Placeholder: tokens.MicrocompactPlaceholder, Ruler: "chars4"}
		},
		New: func(p any) Strategy { return &prune{p: *p.(*PruneParams)} },
	})
}

type prune struct {
	p PruneParams
	// scan keeps what the trigger needs of the context between
	// compactions (the context only grows then), so that asking it before
	// every call reads the items appended since instead of walking the
	// whole context.
	scan pruneScan
}

// pruneScan is, for the Sim sim at compaction round round, what the
// trigger knows of the context's first len(cum)-1 items: the running sum
// of their tool-output tokens (cum[i] is items [0, i)'s), where the
// prompts are, and where the walk of candidates would stop (a summary, or
// an item with an output pruned before).
type pruneScan struct {
	sim     *Sim
	round   int
	cum     []int
	prompts []int
	stops   []int
}

// checkPrune makes every trigger compare its incremental answer with the
// full walk (tests set it).
var checkPrune bool

// candidates walks the context backwards as opencode's prune does: it skips
// the newest SkipTurns user turns, stops at a summary or an output pruned
// before, protects the newest Protect tokens of tool output, and returns the
// older outputs with the tokens they would free (only the tokens when
// collect is false: the trigger, asked before every call, lists nothing).
func (p *prune) candidates(s *Sim, collect bool) (parts [][2]int, freed int) {
	r := s.Ruler(p.p.Ruler)
	turns, total := 0, 0
loop:
	for i := len(s.Ctx) - 1; i >= 0; i-- {
		it := &s.Ctx[i]
		if s.isPrompt(it) {
			turns++
		}
		if turns < p.p.SkipTurns {
			continue
		}
		if it.Orig < 0 {
			break // a summary: nothing before it is sent
		}
		for j := len(it.Msg.Blocks) - 1; j >= 0; j-- {
			b := &it.Msg.Blocks[j]
			if b.Kind != transcript.BlockToolResult {
				continue
			}
			if it.Modified && b.InjectedKind == placeholderPruned {
				break loop
			}
			n := r.Block(b)
			total += n
			if total > p.p.Protect {
				freed += n
				if collect {
					parts = append(parts, [2]int{i, j})
				}
			}
		}
	}
	return parts, freed
}

func (p *prune) overflow(s *Sim) bool { return s.Prompt() > s.Window-p.p.OutputReserve }

func (p *prune) Trigger(s *Sim) (bool, int) {
	freed := p.freeable(s)
	if checkPrune {
		if _, want := p.candidates(s, false); want != freed {
			panic("compaction: prune's incremental trigger found " + strconv.Itoa(freed) + " freeable tokens, the walk " + strconv.Itoa(want))
		}
	}
	return freed > p.p.Minimum || p.overflow(s), freed
}

// isStop reports whether candidates' walk stops at an item: a summary,
// or an item holding an output pruned before.
func isStop(it *Item) bool {
	if it.Orig < 0 {
		return true
	}
	if it.Modified {
		for j := range it.Msg.Blocks {
			if b := &it.Msg.Blocks[j]; b.Kind == transcript.BlockToolResult && b.InjectedKind == placeholderPruned {
				return true
			}
		}
	}
	return false
}

// freeable is what candidates(s, false) returns, from the scan brought up
// to date with the context: the walk covers the items from the
// SkipTurns-th newest prompt back to the last stop before it, whose
// outputs the running sums add up, less the newest Protect tokens of them
// (found by a binary search, then block by block in the item where the
// protection ends).
func (p *prune) freeable(s *Sim) int {
	sc := &p.scan
	if sc.sim != s || sc.round != s.Round || len(sc.cum) == 0 || len(sc.cum)-1 > len(s.Ctx) {
		sc.sim, sc.round = s, s.Round
		sc.cum, sc.prompts, sc.stops = append(sc.cum[:0], 0), sc.prompts[:0], sc.stops[:0]
	}
	r := s.Ruler(p.p.Ruler)
	for i := len(sc.cum) - 1; i < len(s.Ctx); i++ {
		it := &s.Ctx[i]
		n := 0
		for j := range it.Msg.Blocks {
			if b := &it.Msg.Blocks[j]; b.Kind == transcript.BlockToolResult {
				n += r.Block(b)
			}
		}
		sc.cum = append(sc.cum, sc.cum[i]+n)
		if s.isPrompt(it) {
			sc.prompts = append(sc.prompts, i)
		}
		if isStop(it) {
			sc.stops = append(sc.stops, i)
		}
	}
	// c is the newest item the walk looks at.
	c := len(s.Ctx) - 1
	if p.p.SkipTurns > 0 {
		if len(sc.prompts) < p.p.SkipTurns {
			return 0
		}
		c = sc.prompts[len(sc.prompts)-p.p.SkipTurns]
	}
	// stop is the last stop at or before c (-1: none); the walk takes the
	// items after it whole, and of a pruned stop the outputs after its
	// last pruned one.
	k := sort.SearchInts(sc.stops, c+1)
	stop := -1
	if k > 0 {
		stop = sc.stops[k-1]
	}
	whole := sc.cum[c+1] - sc.cum[stop+1]
	total := whole
	if stop >= 0 && s.Ctx[stop].Orig >= 0 {
		total += p.outputsAfterPruned(r, &s.Ctx[stop])
	}
	// first is the oldest item from which on the items up to c fit in
	// Protect whole.
	first := stop + 1 + sort.Search(c+1-(stop+1), func(d int) bool { return sc.cum[c+1]-sc.cum[stop+1+d] <= p.p.Protect })
	kept := sc.cum[c+1] - sc.cum[first]
	switch {
	case first > stop+1:
		kept = p.protected(r, &s.Ctx[first-1], kept)
	case stop >= 0 && s.Ctx[stop].Orig >= 0:
		kept = p.protected(r, &s.Ctx[stop], kept)
	}
	return total - kept
}

// protected adds an item's protected outputs to kept (see outputsWithin).
func (p *prune) protected(r Ruler, it *Item, kept int) int {
	return outputsWithin(r, it, kept, p.p.Protect)
}

// outputsAfterPruned adds up the outputs of an item newer than its newest
// pruned output.
func (p *prune) outputsAfterPruned(r Ruler, it *Item) int {
	return outputsWithin(r, it, 0, math.MaxInt)
}

// outputsWithin walks an item's outputs from the newest, adding them to
// sum while it stays within limit, stopping at a pruned output, and
// returns sum.
func outputsWithin(r Ruler, it *Item, sum, limit int) int {
	for j := len(it.Msg.Blocks) - 1; j >= 0; j-- {
		b := &it.Msg.Blocks[j]
		if b.Kind != transcript.BlockToolResult {
			continue
		}
		if it.Modified && b.InjectedKind == placeholderPruned {
			break
		}
		n := r.Block(b)
		if n > limit-sum {
			break
		}
		sum += n
	}
	return sum
}

// Compact prunes; if the prompt still overflows, it summarizes the whole
// history (opencode's compaction: the next prompt starts at the summary).
func (p *prune) Compact(s *Sim) Outcome {
	parts, freed := p.candidates(s, true)
	ctx := s.Ctx
	action := ""
	after := s.Prompt()
	if freed > p.p.Minimum {
		ctx = make([]Item, len(s.Ctx))
		copy(ctx, s.Ctx)
		byItem := map[int][]int{}
		for _, pt := range parts {
			byItem[pt[0]] = append(byItem[pt[0]], pt[1])
		}
		for i, js := range byItem {
			nb := append([]transcript.Block(nil), ctx[i].Msg.Blocks...)
			for _, j := range js {
				after -= s.Metric.Block(&nb[j])
				nb[j] = placeholderResult(nb[j], p.p.Placeholder, placeholderPruned)
				after += s.Metric.Text(p.p.Placeholder)
			}
			ctx[i] = s.Modify(ctx[i], nb)
		}
		action = "prune"
	}
	if after <= s.Window-p.p.OutputReserve {
		if action == "" {
			return Outcome{Skip: true}
		}
		return Outcome{Ctx: ctx, Action: action}
	}
	all := ctx
	req := &SummaryRequest{Strategy: "prune", Round: s.Round + 1, PromptName: "prune",
		Input:         func() string { return plainText(all) },
		Deterministic: func() string { return handoff(gather(s.Shared, all), "Summary for continuing the conversation") }}
	summary := s.summarize(req)
	return Outcome{Ctx: []Item{s.Synthetic(transcript.RoleAssistant, summary)}, Action: "compact", Summary: summary,
		SummarizerInput: s.Tokens()}
}
