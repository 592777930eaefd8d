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
	return p
}

type lit struct {
	s    string
	fold bool
}

// required returns literals one of which every match of re contains; ok is
// false when there is no such set.
func required(re *syntax.Regexp) ([]lit, bool) {
	switch re.Op {
	case syntax.OpLiteral:
		if len(re.Rune) == 0 {
			return nil, false
		}
		return []lit{{string(re.Rune), re.Flags&syntax.FoldCase != 0}}, true
	case syntax.OpCapture:
		return required(re.Sub[0])
	case syntax.OpPlus:
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
		// Any operand's set will do: pick the one whose shortest literal is
		// longest (fewest false candidates).
		var best []lit
		bestLen := 0
		for _, s := range re.Sub {
			ls, ok := required(s)
			if !ok {
				continue
			}
			m := -1
			for _, l := range ls {
				if n := utf8.RuneCountInString(l.s); m < 0 || n < m {
					m = n
				}
			}
			if m > bestLen {
				best, bestLen = ls, m
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
