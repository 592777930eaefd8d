package anchors

import (
	"regexp/syntax"
	"strings"
	"unicode/utf8"
)

// prefilter is a set of literals at least one of which occurs in every text
// a regex matches: when none occurs, the regex cannot match and is not run.
// Go's regexp has no literal prefilter of its own for alternations, and rule
// regexes run over long tool outputs and commands.
type prefilter struct {
	lits []string
	// fold: the literals are lower-case and must be looked up in the
	// ASCII-lower-cased text.
	fold bool
	// foldSK: some literal holds 's' or 'k', whose case-fold orbits include
	// non-ASCII runes (ſ, KELVIN SIGN); on non-ASCII text the prefilter is
	// not used then, so it never rejects a text the regex would match.
	foldSK bool
}

// maxPrefilterLits bounds the literal set; beyond it the regex runs as is.
const maxPrefilterLits = 64

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
	lits, ok := required(re.Simplify())
	if !ok || len(lits) == 0 {
		return nil
	}
	p := &prefilter{}
	for _, l := range lits {
		if l.fold {
			p.fold = true
		}
	}
	for _, l := range lits {
		s := l.s
		if p.fold {
			if !isASCII(s) {
				return nil // non-ASCII case folding: no cheap exact prefilter
			}
			s = strings.ToLower(s)
			if strings.ContainsAny(s, "sk") {
				p.foldSK = true
			}
		}
		p.lits = append(p.lits, s)
	}
	p.lits = dropContaining(p.lits)
	return p
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

// mayMatch reports whether the text holds one of the literals.
func (p *prefilter) mayMatch(t *text) bool {
	h := t.s
	if p.fold {
		if p.foldSK && !t.isASCII() {
			return true
		}
		h = t.lowASCII()
	}
	for _, l := range p.lits {
		if strings.Contains(h, l) {
			return true
		}
	}
	return false
}
