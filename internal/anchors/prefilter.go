package anchors

import (
	"regexp"
	"regexp/syntax"
	"strings"
	"unicode/utf8"
)

// prefilter is a set of literals at least one of which occurs in every text
// a regex matches: when none occurs, the regex cannot match and is not run.
// Go's regexp has no literal prefilter of its own for alternations, and rule
// regexes run over long tool outputs and commands.
type prefilter struct {
	litSet
	// also are further sets of which every match holds one literal too
	// (the parts of a concatenation: "done … now" holds "done" and "now").
	also []litSet
	// lines: no match spans a line break and every assertion of the regex
	// reads the same on one line as in the whole text (no \A, \z, or ^ and $
	// without (?m)), so the regex matches the text exactly when it matches
	// one of the text's lines, and only a line holding a literal can match.
	lines bool
}

// litSet is a set of literals of which a text must hold one.
type litSet struct {
	lits []string
	// fold: the literals are lower-case and must be looked up in the
	// ASCII-lower-cased text.
	fold bool
	// foldSK: some literal holds 's' or 'k', whose case-fold orbits include
	// non-ASCII runes (ſ, KELVIN SIGN); on a text holding one of those the
	// set is not used then, so it never rejects a text the regex would
	// match.
	foldSK bool
	// one finds the literals in one pass: many in a short text, or
	// folded ones in a text not lower-cased yet.
	one *foldSet
}

// maxPrefilterLits bounds the literal set; beyond it the regex runs as is.
const maxPrefilterLits = 64

// maxAlso bounds the further literal sets a prefilter checks.
const maxAlso = 3

// newPrefilter derives a prefilter from a pattern, or returns nil when no
// useful one exists (some match needs no literal).
func newPrefilter(pattern string, fold bool) *prefilter {
	flags := syntax.Perl
	if fold {
		flags |= syntax.FoldCase
	}
	re, err := syntax.Parse(pattern, flags)
	if err != nil {
		return nil
	}
	sre := re.Simplify()
	lits, ok := required(sre)
	if !ok || len(lits) == 0 {
		return nil
	}
	ls, ok := newLitSet(lits)
	if !ok {
		return nil
	}
	p := &prefilter{litSet: ls, lines: lineLocal(re)}
	var parts [][]lit
	if sre.Op == syntax.OpConcat { // else the only part is the whole
		parts = conjuncts(sre, nil)
	}
	for _, c := range parts {
		if len(p.also) == maxAlso {
			break
		}
		if minLen(c) < 3 {
			continue // short literals occur in most texts
		}
		if s, ok := newLitSet(c); ok && !p.implies(&s) {
			p.also = append(p.also, s)
		}
	}
	return p
}

// newLitSet makes the set of literals ls, lower-cased when one of them
// folds case; ok is false when a folding literal is not ASCII (no cheap
// exact lookup then).
func newLitSet(ls []lit) (litSet, bool) {
	var s litSet
	for _, l := range ls {
		if l.fold {
			s.fold = true
		}
	}
	for _, l := range ls {
		x := l.s
		if s.fold {
			if !isASCII(x) {
				return litSet{}, false
			}
			x = strings.ToLower(x)
			if strings.ContainsAny(x, "sk") {
				s.foldSK = true
			}
		}
		s.lits = append(s.lits, x)
	}
	s.lits = dropContaining(s.lits)
	if len(s.lits) <= 64 && (s.fold || len(s.lits) >= minExactSet) {
		s.one = newByteSet(s.lits, !s.fold)
	}
	return s, true
}

// implies reports whether every text holding one of the prefilter's own
// literals also holds one of o's (each own literal contains one of o's
// with the same case handling), so checking o would add nothing.
func (p *prefilter) implies(o *litSet) bool {
	if o.fold != p.fold {
		return false
	}
	for _, l := range p.lits {
		hit := false
		for _, m := range o.lits {
			if strings.Contains(l, m) {
				hit = true
				break
			}
		}
		if !hit {
			return false
		}
	}
	return true
}

// conjuncts appends to out the literal sets of the parts every match of
// re is made of: each operand of a concatenation, through captures and
// repetitions of at least once, that has a required set.
func conjuncts(re *syntax.Regexp, out [][]lit) [][]lit {
	switch re.Op {
	case syntax.OpCapture, syntax.OpPlus:
		return conjuncts(re.Sub[0], out)
	case syntax.OpRepeat:
		if re.Min >= 1 {
			return conjuncts(re.Sub[0], out)
		}
		return out
	case syntax.OpConcat:
		for _, sub := range re.Sub {
			out = conjuncts(sub, out)
		}
		return out
	}
	if ls, ok := required(re); ok {
		out = append(out, ls)
	}
	return out
}

// lineLocal reports whether no match of re can hold a line break and its
// assertions hold on a line (cut out of a text, without its '\n') exactly
// where they hold in the text: ^ and $ only with (?m), word boundaries
// (a line's ends are not word characters, nor is '\n'), no \A or \z.
func lineLocal(re *syntax.Regexp) bool {
	switch re.Op {
	case syntax.OpAnyChar, syntax.OpBeginText, syntax.OpEndText:
		return false
	case syntax.OpLiteral:
		for _, r := range re.Rune {
			if r == '\n' {
				return false
			}
		}
	case syntax.OpCharClass:
		for i := 0; i+1 < len(re.Rune); i += 2 {
			if re.Rune[i] <= '\n' && '\n' <= re.Rune[i+1] {
				return false
			}
		}
	}
	for _, sub := range re.Sub {
		if !lineLocal(sub) {
			return false
		}
	}
	return true
}

// dropContaining removes every literal that holds another one of the set
// (and repeats): a text holding it holds the shorter one too, so the set
// answers the same with fewer searches ("FAILED" goes when "FAIL" is there).
func dropContaining(lits []string) []string {
	var out []string
	for i, l := range lits {
		keep := true
		for j, m := range lits {
			if j != i && strings.Contains(l, m) && (len(m) < len(l) || j < i) {
				keep = false
				break
			}
		}
		if keep {
			out = append(out, l)
		}
	}
	return out
}

type lit struct {
	s    string
	fold bool
}

// maxExact bounds the strings an exact set may hold.
const maxExact = 64

// exact returns every string re can match when that set is small and
// finite (literals, small alternations and character classes, optional
// parts); empty-width assertions match "". ok is false otherwise.
func exact(re *syntax.Regexp) ([]lit, bool) {
	fold := re.Flags&syntax.FoldCase != 0
	switch re.Op {
	case syntax.OpEmptyMatch, syntax.OpBeginLine, syntax.OpEndLine, syntax.OpBeginText, syntax.OpEndText,
		syntax.OpWordBoundary, syntax.OpNoWordBoundary:
		return []lit{{}}, true
	case syntax.OpLiteral:
		return []lit{{string(re.Rune), fold}}, true
	case syntax.OpCharClass:
		var out []lit
		for i := 0; i+1 < len(re.Rune); i += 2 {
			for r := re.Rune[i]; r <= re.Rune[i+1]; r++ {
				if len(out) == 8 {
					return nil, false
				}
				out = append(out, lit{string(r), false})
			}
		}
		return out, len(out) > 0
	case syntax.OpCapture:
		return exact(re.Sub[0])
	case syntax.OpQuest:
		ls, ok := exact(re.Sub[0])
		if !ok {
			return nil, false
		}
		return append(ls, lit{}), true
	case syntax.OpAlternate:
		var out []lit
		for _, sub := range re.Sub {
			ls, ok := exact(sub)
			if !ok || len(out)+len(ls) > maxExact {
				return nil, false
			}
			out = append(out, ls...)
		}
		return out, true
	case syntax.OpConcat:
		out := []lit{{}}
		for _, sub := range re.Sub {
			ls, ok := exact(sub)
			if !ok {
				return nil, false
			}
			if out, ok = cross(out, ls); !ok {
				return nil, false
			}
		}
		return out, true
	}
	return nil, false
}

// cross concatenates every string of a with every string of b.
func cross(a, b []lit) ([]lit, bool) {
	if len(a)*len(b) > maxExact {
		return nil, false
	}
	out := make([]lit, 0, len(a)*len(b))
	for _, x := range a {
		for _, y := range b {
			out = append(out, lit{x.s + y.s, x.fold || y.fold})
		}
	}
	return out, true
}

// minLen is the length of the shortest string of a set, in runes.
func minLen(ls []lit) int {
	m := -1
	for _, l := range ls {
		if n := utf8.RuneCountInString(l.s); m < 0 || n < m {
			m = n
		}
	}
	return m
}

// required returns literals one of which every match of re contains; ok is
// false when there is no such set.
func required(re *syntax.Regexp) ([]lit, bool) {
	if ls, ok := exact(re); ok {
		if minLen(ls) == 0 {
			return nil, false
		}
		return ls, true
	}
	switch re.Op {
	case syntax.OpCapture, syntax.OpPlus:
		return required(re.Sub[0])
	case syntax.OpRepeat:
		if re.Min >= 1 {
			return required(re.Sub[0])
		}
		return nil, false
	case syntax.OpAlternate:
		var all []lit
		for _, s := range re.Sub {
			ls, ok := required(s)
			if !ok {
				return nil, false
			}
			all = append(all, ls...)
			if len(all) > maxPrefilterLits {
				return nil, false
			}
		}
		return all, true
	case syntax.OpConcat:
		// Any operand's set will do, and so will the cross product of a run
		// of exact operands: pick the set whose shortest literal is longest.
		var best []lit
		bestLen := 0
		consider := func(ls []lit) {
			if m := minLen(ls); m > bestLen {
				best, bestLen = ls, m
			}
		}
		var run []lit
		for _, s := range re.Sub {
			if ls, ok := exact(s); ok {
				if run == nil {
					run = []lit{{}}
				}
				if next, ok := cross(run, ls); ok {
					run = next
					consider(run)
					continue
				}
				run = ls
				consider(run)
				continue
			}
			run = nil
			if ls, ok := required(s); ok {
				consider(ls)
			}
		}
		return best, best != nil
	}
	return nil, false
}

// undecided reports whether the set cannot decide on t: it folds 's' or
// 'k' and t holds ſ or the KELVIN SIGN.
func (s *litSet) undecided(t *text) bool { return s.foldSK && t.foldsSK() }

// in reports whether t holds one of the literals (true when undecided).
func (s *litSet) in(t *text) bool {
	if s.undecided(t) {
		return true
	}
	if s.one != nil && (len(t.s) <= 32*len(s.lits) || s.fold && !t.folded()) {
		// folding: the set ignores the case of ASCII letters, as a
		// search of the ASCII-lower-cased text does, without making that
		// text (unless another test made it)
		return s.one.in(t.s)
	}
	h := t.s
	if s.fold {
		h = t.lowASCII()
	}
	for _, l := range s.lits {
		if strings.Contains(h, l) {
			return true
		}
	}
	return false
}

// mayMatch reports whether the text holds one of the literals, and one of
// each further set's.
func (p *prefilter) mayMatch(t *text) bool {
	return p.litSet.in(t) && p.alsoIn(t)
}

// alsoIn reports whether the text holds one literal of each further set.
func (p *prefilter) alsoIn(t *text) bool {
	for i := range p.also {
		if !p.also[i].in(t) {
			return false
		}
	}
	return true
}

// match reports whether re, the regex the prefilter was made from,
// matches t: never when a literal set misses, and for a line-local regex
// only the lines that hold a literal are searched (most of a long tool
// output is not, and Go's regexp is slow on long texts).
func (p *prefilter) match(re *regexp.Regexp, t *text) bool {
	if !p.alsoIn(t) {
		return false
	}
	if !p.lines || p.undecided(t) {
		return p.litSet.in(t) && re.MatchString(t.s)
	}
	if p.one != nil {
		// The set scans the text itself: no lower-cased copy.
		for from := 0; from < len(t.s); {
			i := p.one.index(t.s[from:])
			if i < 0 {
				return false
			}
			end, ok := p.matchLine(re, t.s, from+i)
			if ok {
				return true
			}
			from = end + 1
		}
		return false
	}
	h := t.s
	if p.fold {
		h = t.alignedLow()
	}
	for _, l := range p.lits {
		for from := 0; from < len(h); {
			i := strings.Index(h[from:], l)
			if i < 0 {
				break
			}
			end, ok := p.matchLine(re, t.s, from+i)
			if ok {
				return true
			}
			from = end + 1
		}
	}
	return false
}

// matchLine reports whether re matches the line of s that holds byte i,
// and where that line ends.
func (p *prefilter) matchLine(re *regexp.Regexp, s string, i int) (end int, ok bool) {
	start := strings.LastIndexByte(s[:i], '\n') + 1
	end = len(s)
	if j := strings.IndexByte(s[i:], '\n'); j >= 0 {
		end = i + j
	}
	return end, re.MatchString(s[start:end])
}
