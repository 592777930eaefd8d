package tokens

import "github.com/compactbench/compactbench/internal/transcript"

// Call is one recorded API call: its real context and each ruler's estimate.
//
// Definitions (per transcript, per ruler r):
//
//	conv_r(k)  = r's count of the prompt of call k: the messages before it as
//	             the harness sent them (see walk), each message's framing
//	             constant included, thinking of earlier turns left out for
//	             models that strip it (StripsOldThinking)
//	overhead_r = real(a) − conv_r(a) at the anchor call a that governs k
//	             (the first call; with AnchorSegments also the first call
//	             after a full compaction or a model change)
//	est_r(k)   = overhead_r + conv_r(k)
//	err_r(k)   = (est_r(k) − real(k)) / real(k)
//
// The overhead stands for the system prompt and tool definitions, which no
// transcript records; every ruler gets its own, so a ruler is judged on the
// conversation it counts, not on a constant it cannot know. err is 0 at an
// anchor by construction: anchors are left out of error statistics.
//
// The running sums are kept incrementally (each block is counted once per
// ruler), so a transcript costs O(blocks + calls × rulers).
type Call struct {
	// Index is the call's 0-based position among the transcript's calls
	// with a usable usage record.
	Index int
	// Message is the index of the call's message in t.Messages.
	Message int
	// MessageID is the API message id; Model the model called.
	MessageID string
	Model     string
	// Line is the call's first record line.
	Line int
	// Real is usage.Context(): input + cache_read + cache_creation.
	Real int64
	// Anchor marks calls that fixed the overhead (err is 0 by construction).
	Anchor bool
	// Drop marks a call whose real context fell since the previous call
	// with no compaction recorded (IsDrop).
	Drop bool
	// Complete is false when a load problem lies at or before the call's
	// line: its real context holds content the transcript lost.
	Complete bool
	// Est holds overhead_r + conv_r per ruler, in the order given.
	Est []int64
}

// Err returns (est − real)/real for ruler i.
func (c *Call) Err(i int) float64 { return float64(c.Est[i]-c.Real) / float64(c.Real) }

// Boundary is a compaction the harness recorded, with each ruler's estimate
// of the context at that moment, to compare with the harness's own count.
type Boundary struct {
	// Index is the compaction's position in t.Compactions.
	Index      int
	Compaction *transcript.Compaction
	// LastCall is the index (in the calls) of the last call before the
	// event, or -1; LastReal its real context.
	LastCall int
	LastReal int64
	// Est holds overhead_r + conv_r of the prompt at the event, per ruler;
	// nil when no call preceded the event (no overhead known).
	Est []int64
}

// Estimates are EstimateCalls' results for one transcript.
type Estimates struct {
	Calls      []Call
	Boundaries []Boundary
}

// Drops counts the calls after an unrecorded drop.
func (e *Estimates) Drops() int {
	n := 0
	for i := range e.Calls {
		if e.Calls[i].Drop {
			n++
		}
	}
	return n
}

// rulerSums keeps, per ruler, the running count of the prompt.
type rulerSums struct {
	rulers   []*Ruler
	base     []int64 // everything but thinking
	thinkCur []int64 // thinking of the current turn
	thinkOld []int64 // thinking of earlier turns
	overhead []int64
	out      Estimates
	// c4, c4msg are the places of the chars4 and chars4msg rulers when
	// both are measured (else -1): each block's texts are read once for
	// both (chars4Pair).
	c4, c4msg int
}

// pairChars4 finds chars4 and chars4msg among the rulers.
func (s *rulerSums) pairChars4() {
	s.c4, s.c4msg = -1, -1
	for r, ru := range s.rulers {
		switch ru.c.(type) {
		case chars4:
			s.c4 = r
		case chars4msg:
			s.c4msg = r
		}
	}
	if s.c4 < 0 || s.c4msg < 0 {
		s.c4, s.c4msg = -1, -1
	}
}

// fillChars4 counts the blocks of m with chars4 and chars4msg together
// where either count is not cached yet, and caches both.
func (s *rulerSums) fillChars4(m *transcript.Message) {
	a, b := s.rulers[s.c4], s.rulers[s.c4msg]
	if a.slot < 0 || b.slot < 0 {
		return // Block counts them one by one
	}
	for j := range m.Blocks {
		blk := &m.Blocks[j]
		_, okA := blk.CachedTokens(a.slot)
		_, okB := blk.CachedTokens(b.slot)
		if okA && okB {
			continue
		}
		na, nb := chars4Pair(blk)
		if !okA {
			blk.SetCachedTokens(a.slot, na)
		}
		if !okB {
			blk.SetCachedTokens(b.slot, nb)
		}
	}
}

func (s *rulerSums) reset() {
	clear(s.base)
	clear(s.thinkCur)
	clear(s.thinkOld)
}

func (s *rulerSums) add(m *transcript.Message) {
	if s.c4 >= 0 {
		s.fillChars4(m)
	}
	for r, ru := range s.rulers {
		s.base[r] += int64(ru.MessageOverhead())
		for j := range m.Blocks {
			b := &m.Blocks[j]
			if b.Kind == transcript.BlockThinking {
				s.thinkCur[r] += int64(ru.Block(b))
			} else {
				s.base[r] += int64(ru.Block(b))
			}
		}
	}
}

func (s *rulerSums) turn() {
	for r := range s.rulers {
		s.thinkOld[r] += s.thinkCur[r]
		s.thinkCur[r] = 0
	}
}

func (s *rulerSums) replace(old, with *transcript.Block) {
	for r, ru := range s.rulers {
		s.base[r] += int64(ru.Block(with) - ru.Block(old))
	}
}

func (s *rulerSums) conv(r int, strip bool) int64 {
	n := s.base[r] + s.thinkCur[r]
	if !strip {
		n += s.thinkOld[r]
	}
	return n
}

func (s *rulerSums) call(p *point) {
	c := Call{Index: p.call, Message: p.msg, MessageID: p.m.ID, Model: p.m.Model, Line: p.m.Line,
		Real: p.real, Anchor: p.anchor, Drop: p.drop, Complete: p.complete, Est: make([]int64, len(s.rulers))}
	for r := range s.rulers {
		conv := s.conv(r, p.strip)
		if p.anchor {
			s.overhead[r] = p.real - conv
		}
		c.Est[r] = s.overhead[r] + conv
	}
	s.out.Calls = append(s.out.Calls, c)
}

func (s *rulerSums) boundary(k int, c *transcript.Compaction, strip bool) {
	b := Boundary{Index: k, Compaction: c, LastCall: len(s.out.Calls) - 1}
	if b.LastCall >= 0 {
		b.LastReal = s.out.Calls[b.LastCall].Real
		b.Est = make([]int64, len(s.rulers))
		for r := range s.rulers {
			b.Est[r] = s.overhead[r] + s.conv(r, strip)
		}
	}
	s.out.Boundaries = append(s.out.Boundaries, b)
}

// EstimateCalls measures rulers against the real context of every recorded
// API call of t (see Call for the definitions) and estimates the context at
// every recorded compaction. models says which models strip old thinking
// (nil: the shipped table).
func EstimateCalls(t *transcript.Transcript, rulers []*Ruler, mode Anchoring, models *Models) Estimates {
	n := len(rulers)
	s := &rulerSums{rulers: rulers, base: make([]int64, n), thinkCur: make([]int64, n),
		thinkOld: make([]int64, n), overhead: make([]int64, n)}
	s.pairChars4()
	walk(t, mode, models, s)
	return s.out
}
