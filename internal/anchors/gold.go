package anchors

import (
	"hash/fnv"
	"math"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"unicode"

	"github.com/compactbench/compactbench/internal/transcript"
)

// Gold work: readers' agreement, trivial baselines, and fitting a rule set
// to gold labels with k-fold cross-validation by session. Everything here
// takes turns and labels already read and resolved (see ResolveLabels).

// GoldDoc is one gold-labelled transcript.
type GoldDoc struct {
	ID    string
	Turns []transcript.Turn
	// Gold is the gold type of each turn, "" where the turn is no anchor
	// (when labels disagree on a turn's type, the first in Types order).
	Gold []Type
	// Lang is the language of the user's prompts (PromptLanguage).
	Lang string
	// Group is the folder the transcript was found in (one person's
	// sessions; see GroupOf), for leave-one-folder-out validation; "" when
	// unknown.
	Group string
}

// GroupOf names the folder a transcript file belongs to: the first
// directory under the input root that holds it (one person's sessions in
// a corpus of several people's folders), or the root's base name when the
// file lies directly in it or no root holds it.
func GroupOf(roots []string, file string) string {
	file = filepath.Clean(file)
	for _, r := range roots {
		r = filepath.Clean(r)
		rel, err := filepath.Rel(r, file)
		if err != nil || rel == "." || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
			continue
		}
		if first, _, found := strings.Cut(filepath.ToSlash(rel), "/"); found {
			return first
		}
		return filepath.Base(r)
	}
	return filepath.Base(filepath.Dir(file))
}

// NewGoldDoc builds a GoldDoc from resolved labels.
func NewGoldDoc(id string, turns []transcript.Turn, labels []Label) GoldDoc {
	d := GoldDoc{ID: id, Turns: turns, Gold: make([]Type, len(turns)), Lang: PromptLanguage(turns)}
	for _, l := range labels {
		if l.Turn < 0 || l.Turn >= len(turns) || l.Type == "" {
			continue
		}
		if cur := d.Gold[l.Turn]; cur == "" || slices.Index(Types, l.Type) < slices.Index(Types, cur) {
			d.Gold[l.Turn] = l.Type
		}
	}
	return d
}

// PromptLanguage guesses the language of a transcript's prompts: ja when
// kana are written, zh for other Han, ko for Hangul (each when such
// letters are at least a tenth of the letters), es when Spanish function
// words dominate the English ones, else en.
func PromptLanguage(turns []transcript.Turn) string {
	var letters, han, kana, hangul, es, en int
	for i := range turns {
		word := make([]rune, 0, 16)
		flush := func() {
			switch string(word) {
			case "el", "la", "los", "las", "que", "de", "del", "por", "para", "con", "una", "es", "en", "y", "lo", "se", "como", "pero", "más":
				es++
			case "the", "to", "and", "of", "is", "it", "in", "that", "this", "for", "with", "a", "on", "be", "can", "you":
				en++
			}
			word = word[:0]
		}
		for _, r := range turns[i].UserMessage {
			switch {
			case unicode.In(r, unicode.Hiragana, unicode.Katakana):
				kana++
				letters++
			case unicode.Is(unicode.Han, r):
				han++
				letters++
			case unicode.Is(unicode.Hangul, r):
				hangul++
				letters++
			case unicode.IsLetter(r):
				letters++
				word = append(word, unicode.ToLower(r))
				continue
			}
			flush()
		}
		flush()
	}
	switch {
	case letters == 0:
		return "en"
	case kana*20 >= letters:
		return "ja"
	case hangul*10 >= letters:
		return "ko"
	case han*10 >= letters:
		return "zh"
	case es > en:
		return "es"
	}
	return "en"
}

// GoldScore is a detector's score against gold labels: all types (a turn
// is found when any anchor is on it), typed (the type must match too), and
// per type.
type GoldScore struct {
	Turn, Typed Score
	ByType      [4]Score // in Types order
}

// Add adds o to s.
func (s *GoldScore) Add(o GoldScore) {
	s.Turn.Add(o.Turn)
	s.Typed.Add(o.Typed)
	for k := range s.ByType {
		s.ByType[k].Add(o.ByType[k])
	}
}

// ScoreTurns scores predicted types per turn ("" no anchor) against gold.
func ScoreTurns(pred, gold []Type) GoldScore {
	var s GoldScore
	for i := range gold {
		p, g := pred[i], gold[i]
		switch {
		case p != "" && g != "":
			s.Turn.TP++
		case p != "":
			s.Turn.FP++
		case g != "":
			s.Turn.FN++
		}
		switch {
		case p != "" && p == g:
			s.Typed.TP++
		default:
			if p != "" {
				s.Typed.FP++
			}
			if g != "" {
				s.Typed.FN++
			}
		}
		for k, t := range Types {
			switch {
			case p == t && g == t:
				s.ByType[k].TP++
			case p == t:
				s.ByType[k].FP++
			case g == t:
				s.ByType[k].FN++
			}
		}
	}
	return s
}

// Agreement compares two readings of the same transcripts.
type Agreement struct {
	Sessions, Turns int
	// Score is the second reading scored against the first.
	Score GoldScore
	// Kappa is Cohen's kappa of anchor/not-anchor over every turn.
	Kappa float64
}

// Agree measures the agreement of two readings; first[i] and second[i]
// are the same transcript.
func Agree(first, second []GoldDoc) Agreement {
	var a Agreement
	var both, one, two int
	for i := range first {
		a.Sessions++
		a.Turns += len(first[i].Gold)
		a.Score.Add(ScoreTurns(second[i].Gold, first[i].Gold))
		for j := range first[i].Gold {
			x, y := first[i].Gold[j] != "", second[i].Gold[j] != ""
			if x {
				one++
			}
			if y {
				two++
			}
			if x == y {
				both++
			}
		}
	}
	if a.Turns > 0 {
		n := float64(a.Turns)
		po := float64(both) / n
		p1, p2 := float64(one)/n, float64(two)/n
		pe := p1*p2 + (1-p1)*(1-p2)
		if pe < 1 {
			a.Kappa = (po - pe) / (1 - pe)
		} else {
			a.Kappa = 1
		}
	}
	return a
}

// Names of the built-in baseline rule sets.
const (
	BaselineEveryTurnSet = "baseline-every-turn"
	BaselineAnyEditSet   = "baseline-any-edit"
)

// BaselineSets are the trivial detectors every gold F1 is shown beside.
var BaselineSets = []string{BaselineEveryTurnSet, BaselineAnyEditSet}

// BaselineEveryTurn predicts an anchor (task-completion) on every turn.
func BaselineEveryTurn(d *GoldDoc) []Type {
	return mustBuiltinSet(BaselineEveryTurnSet).Predict(d.Turns)
}

// BaselineAnyEdit predicts a task-completion on every turn with a
// successful edit-tool call.
func BaselineAnyEdit(d *GoldDoc) []Type { return mustBuiltinSet(BaselineAnyEditSet).Predict(d.Turns) }

func mustBuiltinSet(name string) *RuleSet {
	s, err := Builtin(name)
	if err != nil {
		panic(err) // embedded
	}
	return s
}

// Predict returns the anchor type the set puts on each turn of the whole
// transcript ("" where none; the synthetic fallback is left out: it marks
// the end of a window, not a labelled turn).
func (s *RuleSet) Predict(turns []transcript.Turn) []Type {
	ev := s.Evaluate(turns)
	out := make([]Type, len(turns))
	for _, a := range ev.Anchors(0, len(turns)) {
		out[a.Turn] = a.Type
	}
	return out
}

// matchTable is, per transcript, which rules of a set matched each turn.
type matchTable struct {
	nrules  int
	matched [][]bool // per doc: turn*nrules+rule
}

func newMatchTable(s *RuleSet, docs []GoldDoc) matchTable {
	m := matchTable{nrules: len(s.Rules), matched: make([][]bool, len(docs))}
	for i := range docs {
		ev := s.Evaluate(docs[i].Turns)
		row := make([]bool, len(docs[i].Turns)*m.nrules)
		for t := range docs[i].Turns {
			for r := range s.Rules {
				row[t*m.nrules+r] = ev.Matched(t, r)
			}
		}
		m.matched[i] = row
	}
	return m
}

// predict is the set's prediction on doc i with only the enabled rules (in
// file order, the first matching enabled rule names the anchor).
func (m *matchTable) predict(s *RuleSet, docs []GoldDoc, i int, on []bool) []Type {
	out := make([]Type, len(docs[i].Turns))
	for t := range out {
		for r := 0; r < m.nrules; r++ {
			if on[r] && m.matched[i][t*m.nrules+r] {
				out[t] = s.Rules[r].Type
				break
			}
		}
	}
	return out
}

func (m *matchTable) score(s *RuleSet, docs []GoldDoc, idx []int, on []bool) GoldScore {
	var g GoldScore
	for _, i := range idx {
		g.Add(ScoreTurns(m.predict(s, docs, i, on), docs[i].Gold))
	}
	return g
}

// fitObjective is what fitting maximises: the mean of turn F1 and typed F1
// (so that a rule naming the wrong type costs), or -1 when turn precision
// is under the floor.
func fitObjective(g GoldScore, floor float64) float64 {
	p, ok := g.Turn.Precision()
	if !ok || p < floor {
		return -1
	}
	f, _ := g.Turn.F1()
	ft, _ := g.Typed.F1()
	return (f + ft) / 2
}

// fit chooses which rules of s to enable so that turn-level F1 on the
// transcripts docs[idx] is highest with precision at least floor: greedy
// forward selection (add the rule that raises F1 most, while any does),
// then backward elimination (drop a rule whose removal does not lower F1).
// Rules keep their file order. It returns the enabled flags.
func (m *matchTable) fit(s *RuleSet, docs []GoldDoc, idx []int, floor float64) []bool {
	on := make([]bool, m.nrules)
	best := -1.0
	for {
		pick := -1
		for r := range on {
			if on[r] || s.Rules[r].BelowThreshold(s) {
				continue
			}
			on[r] = true
			if v := fitObjective(m.score(s, docs, idx, on), floor); v > best+1e-9 {
				best, pick = v, r
			}
			on[r] = false
		}
		if pick < 0 {
			break
		}
		on[pick] = true
	}
	for r := range on {
		if !on[r] {
			continue
		}
		on[r] = false
		if v := fitObjective(m.score(s, docs, idx, on), floor); v >= best-1e-9 {
			best = math.Max(best, v)
			continue
		}
		on[r] = true
	}
	return on
}

// CVResult is the outcome of cross-validating FitRules.
type CVResult struct {
	// K is the number of folds; Groups names them when the folds are
	// folders (CrossValidateByGroup), in fold order.
	K      int
	Groups []string
	// Held is the pooled score of every transcript, each predicted by the
	// rules fitted on the folds it was not in.
	Held GoldScore
	// ByLang is Held split by the prompts' language.
	ByLang map[string]GoldScore
	// Folds are the rules enabled in each fold's fit.
	Folds [][]bool
	// All are the rules enabled when fitting on every transcript (what
	// ships), and Fitted its (optimistic) score on them.
	All    []bool
	Fitted GoldScore
}

// Fold is the fold of a transcript among k: a hash of its ID, so a
// transcript's fold does not depend on which others are there.
func Fold(id string, k int) int {
	h := fnv.New32a()
	h.Write([]byte(id))
	return int(h.Sum32() % uint32(k))
}

// CrossValidate fits the set's rules on k−1 folds of the transcripts and
// scores the held-out fold, for each fold; no transcript is scored by rules
// fitted on it.
func CrossValidate(s *RuleSet, docs []GoldDoc, k int, floor float64) CVResult {
	fold := make([]int, len(docs))
	for i := range docs {
		fold[i] = Fold(docs[i].ID, k)
	}
	return crossValidate(s, docs, k, fold, floor)
}

// CrossValidateByGroup is CrossValidate with one fold per group (folder):
// leave-one-folder-out, so no person's sessions are scored by rules fitted
// on that person's other sessions. Groups are in sorted order.
func CrossValidateByGroup(s *RuleSet, docs []GoldDoc, floor float64) CVResult {
	var groups []string
	for i := range docs {
		if !slices.Contains(groups, docs[i].Group) {
			groups = append(groups, docs[i].Group)
		}
	}
	sort.Strings(groups)
	fold := make([]int, len(docs))
	for i := range docs {
		fold[i] = slices.Index(groups, docs[i].Group)
	}
	res := crossValidate(s, docs, len(groups), fold, floor)
	res.Groups = groups
	return res
}

// crossValidate fits on every fold but one and scores that one, for each
// of k folds; fold[i] is docs[i]'s fold.
func crossValidate(s *RuleSet, docs []GoldDoc, k int, fold []int, floor float64) CVResult {
	m := newMatchTable(s, docs)
	res := CVResult{K: k, ByLang: map[string]GoldScore{}}
	for f := 0; f < k; f++ {
		var train, test []int
		for i := range docs {
			if fold[i] == f {
				test = append(test, i)
			} else {
				train = append(train, i)
			}
		}
		on := m.fit(s, docs, train, floor)
		res.Folds = append(res.Folds, on)
		for _, i := range test {
			g := ScoreTurns(m.predict(s, docs, i, on), docs[i].Gold)
			res.Held.Add(g)
			l := res.ByLang[docs[i].Lang]
			l.Add(g)
			res.ByLang[docs[i].Lang] = l
		}
	}
	all := make([]int, len(docs))
	for i := range all {
		all[i] = i
	}
	res.All = m.fit(s, docs, all, floor)
	res.Fitted = m.score(s, docs, all, res.All)
	return res
}
