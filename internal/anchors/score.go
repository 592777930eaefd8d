package anchors

// Scoring. A detected anchor matches a label when both are on the same turn
// of the same transcript. Counting is over labelled turns (a turn with
// several labels counts once), micro-averaged over transcripts:
//
//   - rule set, all types: detected = turns with a natural anchor; TP =
//     detected turns that carry any label, FP = detected turns without one,
//     FN = labelled turns without an anchor. Types need not agree.
//   - per type T: detected = turns whose anchor has type T, against turns
//     with a label of type T.
//   - per rule: detected = turns where the rule fired, against turns with
//     any label (its recall is the share of labelled turns it caught).
//   - synthetic: the synthetic anchor's turn, against turns with any label.
//
// Only transcripts that have labels of the source are scored (the caller
// passes a nil Truth otherwise): for gold, transcripts named in a label
// file (a "none" line makes a transcript labelled with no anchors); for
// evidence, transcripts with at least one evidence label, since evidence is
// positive-only.

// Score counts detections against labels.
type Score struct {
	TP, FP, FN int
}

// Add adds o to s.
func (s *Score) Add(o Score) { s.TP, s.FP, s.FN = s.TP+o.TP, s.FP+o.FP, s.FN+o.FN }

// Precision is TP/(TP+FP); ok is false when nothing was detected.
func (s Score) Precision() (float64, bool) {
	if s.TP+s.FP == 0 {
		return 0, false
	}
	return float64(s.TP) / float64(s.TP+s.FP), true
}

// Recall is TP/(TP+FN); ok is false when there is no label.
func (s Score) Recall() (float64, bool) {
	if s.TP+s.FN == 0 {
		return 0, false
	}
	return float64(s.TP) / float64(s.TP+s.FN), true
}

// F1 is the harmonic mean of precision and recall; ok is false when either
// is undefined. Both zero gives 0.
func (s Score) F1() (float64, bool) {
	p, ok1 := s.Precision()
	r, ok2 := s.Recall()
	if !ok1 || !ok2 {
		return 0, false
	}
	if p+r == 0 {
		return 0, true
	}
	return 2 * p * r / (p + r), true
}

// Scores pairs a Score against gold labels with one against evidence labels.
type Scores struct {
	Gold, Evidence Score
}

func (s *Scores) add(o Scores) { s.Gold.Add(o.Gold); s.Evidence.Add(o.Evidence) }

// RuleCounts are one rule's counts.
type RuleCounts struct {
	// Matches counts turns where the rule's conditions held.
	Matches int
	// Fires counts turns where the rule produced the anchor.
	Fires int
	Scores
}

// SetCounts are one rule set's counts over one or more transcripts.
type SetCounts struct {
	Set string
	// RuleSet is the set counted (for its rules' names and numbers).
	RuleSet     *RuleSet
	Transcripts int
	// WithTurns counts transcripts with at least one turn.
	WithTurns int
	Turns     int
	// MatchedTurns counts turns on which some rule's conditions held.
	MatchedTurns int
	// TypeAnchors counts natural anchors per type (indexed like Types).
	TypeAnchors [4]int
	// Anchors counts natural anchors; Synthetic, synthetic anchors.
	Anchors   int
	Synthetic int
	// NoNatural counts transcripts with turns on which no rule fired.
	NoNatural int
	// GoldTranscripts and EvidenceTranscripts count the transcripts scored
	// against each source; GoldTurns and EvidenceTurns their labelled turns.
	GoldTranscripts, EvidenceTranscripts int
	GoldTurns, EvidenceTurns             int
	All                                  Scores
	// ByType is indexed like Types.
	ByType         [4]Scores
	Rules          []RuleCounts
	SyntheticScore Scores
}

// Add sums o into c (same set, same rules).
func (c *SetCounts) Add(o *SetCounts) {
	if c.RuleSet == nil {
		c.RuleSet = o.RuleSet
	}
	c.Transcripts += o.Transcripts
	c.WithTurns += o.WithTurns
	c.Turns += o.Turns
	c.MatchedTurns += o.MatchedTurns
	for i := range c.TypeAnchors {
		c.TypeAnchors[i] += o.TypeAnchors[i]
	}
	c.Anchors += o.Anchors
	c.Synthetic += o.Synthetic
	c.NoNatural += o.NoNatural
	c.GoldTranscripts += o.GoldTranscripts
	c.EvidenceTranscripts += o.EvidenceTranscripts
	c.GoldTurns += o.GoldTurns
	c.EvidenceTurns += o.EvidenceTurns
	c.All.add(o.All)
	for i := range c.ByType {
		c.ByType[i].add(o.ByType[i])
	}
	if c.Rules == nil {
		c.Rules = make([]RuleCounts, len(o.Rules))
	}
	for i := range o.Rules {
		c.Rules[i].Matches += o.Rules[i].Matches
		c.Rules[i].Fires += o.Rules[i].Fires
		c.Rules[i].add(o.Rules[i].Scores)
	}
	c.SyntheticScore.add(o.SyntheticScore)
}

// Truth is the labelled turns of one transcript from one source.
type Truth struct {
	// mask[i] has bit k set when turn i carries a label of Types[k].
	mask []uint8
	// beyond counts labels past the last turn, per type bit (they can only
	// be missed).
	beyond map[int]uint8
}

// NewTruth builds the truth of a transcript with n turns from labels given
// as (turn, type) pairs.
func NewTruth(n int) *Truth { return &Truth{mask: make([]uint8, n)} }

// Add marks turn as carrying a label of type t.
func (tr *Truth) Add(turn int, t Type) {
	bit := typeBit(t)
	if turn < len(tr.mask) {
		tr.mask[turn] |= bit
		return
	}
	if tr.beyond == nil {
		tr.beyond = map[int]uint8{}
	}
	tr.beyond[turn] |= bit
}

// Turns counts labelled turns (beyond the last turn included).
func (tr *Truth) Turns() int {
	n := len(tr.beyond)
	for _, m := range tr.mask {
		if m != 0 {
			n++
		}
	}
	return n
}

func typeBit(t Type) uint8 { return 1 << typeIndex(t) }

// typeIndex is t's index in Types.
func typeIndex(t Type) int {
	for i, x := range Types {
		if x == t {
			return i
		}
	}
	panic("anchors: unknown type " + string(t))
}

// Count scores an evaluation of a whole transcript (every turn) against its
// gold and evidence truths; either may be nil (not scored).
func Count(e *Evaluation, gold, evidence *Truth) SetCounts {
	n := e.Len()
	c := SetCounts{Set: e.Set.Name, RuleSet: e.Set, Transcripts: 1, Turns: n, Rules: make([]RuleCounts, len(e.Set.Rules))}
	f := e.Detect(0, n)
	nat := f.Natural()
	c.Anchors = len(nat)
	for _, a := range nat {
		c.TypeAnchors[typeIndex(a.Type)]++
	}
	if n > 0 {
		c.WithTurns = 1
		if len(nat) == 0 {
			c.NoNatural = 1
		}
	}
	if f.Synthetic != nil {
		c.Synthetic = 1
	}
	for i := 0; i < n; i++ {
		any := false
		for r := range e.Set.Rules {
			if e.Matched(i, r) {
				c.Rules[r].Matches++
				any = true
			}
		}
		if any {
			c.MatchedTurns++
		}
		if r := e.Fired(i); r >= 0 {
			c.Rules[r].Fires++
		}
	}
	score := func(tr *Truth, pick func(*Scores) *Score) {
		if tr == nil {
			return
		}
		// Detected type bit per turn.
		det := make([]uint8, n)
		for _, a := range nat {
			det[a.Turn] = typeBit(a.Type)
		}
		all := pick(&c.All)
		for i := 0; i < n; i++ {
			lab := tr.mask[i]
			d := det[i]
			switch {
			case d != 0 && lab != 0:
				all.TP++
			case d != 0:
				all.FP++
			case lab != 0:
				all.FN++
			}
			for k := range Types {
				bit := uint8(1) << k
				s := pick(&c.ByType[k])
				switch {
				case d&bit != 0 && lab&bit != 0:
					s.TP++
				case d&bit != 0:
					s.FP++
				case lab&bit != 0:
					s.FN++
				}
			}
			fired := e.Fired(i)
			for r := range e.Set.Rules {
				s := pick(&c.Rules[r].Scores)
				switch {
				case fired == r && lab != 0:
					s.TP++
				case fired == r:
					s.FP++
				case lab != 0:
					s.FN++
				}
			}
			if f.Synthetic != nil {
				s := pick(&c.SyntheticScore)
				switch {
				case f.Synthetic.Turn == i && lab != 0:
					s.TP++
				case f.Synthetic.Turn == i:
					s.FP++
				case lab != 0:
					s.FN++
				}
			}
		}
		for _, lab := range tr.beyond {
			all.FN++
			for k := range Types {
				if lab&(1<<k) != 0 {
					pick(&c.ByType[k]).FN++
				}
			}
			for r := range e.Set.Rules {
				pick(&c.Rules[r].Scores).FN++
			}
			if f.Synthetic != nil {
				pick(&c.SyntheticScore).FN++
			}
		}
	}
	if gold != nil {
		c.GoldTranscripts, c.GoldTurns = 1, gold.Turns()
		score(gold, func(s *Scores) *Score { return &s.Gold })
	}
	if evidence != nil {
		c.EvidenceTranscripts, c.EvidenceTurns = 1, evidence.Turns()
		score(evidence, func(s *Scores) *Score { return &s.Evidence })
	}
	return c
}

// Tally sums SetCounts per rule set, in the order sets are first seen.
type Tally struct {
	Sets  []*SetCounts
	index map[string]int
}

// Add sums the counts of one transcript.
func (t *Tally) Add(cs []SetCounts) {
	if t.index == nil {
		t.index = map[string]int{}
	}
	for i := range cs {
		k, ok := t.index[cs[i].Set]
		if !ok {
			k = len(t.Sets)
			t.index[cs[i].Set] = k
			t.Sets = append(t.Sets, &SetCounts{Set: cs[i].Set})
		}
		t.Sets[k].Add(&cs[i])
	}
}
