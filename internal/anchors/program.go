package anchors

import (
	"encoding/binary"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"unsafe"

	"github.com/compactbench/compactbench/internal/transcript"
)

// program is one or more rule sets compiled together. Text tests that the
// sets share (the same needles, case and operator) become one leaf, so a
// transcript's text is searched once per distinct test whatever the number of
// rule sets, and each (text, leaf) answer is memoised per evaluation.
type program struct {
	leaves []leaf
	index  map[string]int32
	sets   []*compiledSet
	// uses says which turn features some condition needs (bit per
	// CondKind), so facts computes only those.
	uses uint32
}

// leaf is a text test that looks at the text itself.
type leaf struct {
	op      TextOp // TextContains, TextRegex, TextLongerThan, TextShorterThan
	needles []string
	fold    bool
	// ascii: every needle is ASCII, so folding ASCII letters of the text is
	// enough (no Unicode lower-casing of the whole text).
	ascii bool
	re    *regexp.Regexp
	pre   *prefilter
	n     int
	// folder searches ASCII needles case-insensitively in one pass.
	folder *foldSet
	// exact searches many needles with their case in one pass (short
	// texts; a long one is searched needle by needle, each search being
	// vectorised).
	exact *foldSet
}

// minExactSet is the number of needles from which a case-sensitive
// contains searches a short text in one pass.
const minExactSet = 4

type compiledSet struct {
	set   *RuleSet
	rules [][]*cnode // per rule, its conditions (all must hold), cheapest first
	// usesNext: some rule looks at the next turn's prompt (next_user).
	usesNext bool
}

// cnode is a compiled turn condition.
type cnode struct {
	kind    CondKind
	kids    []*cnode
	b       bool
	tools   toolSet
	success int8  // -1 any, 0 must fail, 1 must succeed
	git     uint8 // CondGit: bit k for GitKinds[k]
	last    bool
	min     int // calls or results that must match
	command *tnode
	path    *tnode
	input   *tnode
	output  *tnode
	text    *tnode
	cost    int
	pos     int // position in its source list
	src     *Cond
}

// tnode is a compiled text matcher.
type tnode struct {
	op   TextOp
	leaf int32
	kids []*tnode
	cost int
}

// toolSet matches tool names: exact names and "prefix*" patterns.
type toolSet struct {
	exact    []string
	prefixes []string
}

func (t *toolSet) empty() bool { return len(t.exact) == 0 && len(t.prefixes) == 0 }

func (t *toolSet) match(name string) bool {
	if t.empty() {
		return true
	}
	for _, e := range t.exact {
		if e == name {
			return true
		}
	}
	for _, p := range t.prefixes {
		if strings.HasPrefix(name, p) {
			return true
		}
	}
	return false
}

func newToolSet(names []string) toolSet {
	var t toolSet
	for _, n := range names {
		if p, ok := strings.CutSuffix(n, "*"); ok {
			t.prefixes = append(t.prefixes, p)
		} else {
			t.exact = append(t.exact, n)
		}
	}
	return t
}

// compile builds a program for the given sets.
func compile(sets ...*RuleSet) *program {
	p := &program{index: map[string]int32{}}
	for _, s := range sets {
		cs := &compiledSet{set: s}
		for _, r := range s.Rules {
			cs.rules = append(cs.rules, p.condList(r.When))
			cs.usesNext = cs.usesNext || usesNext(r.When)
		}
		p.sets = append(p.sets, cs)
	}
	return p
}

// usesNext reports whether a condition looks at the next turn.
func usesNext(cs []*Cond) bool {
	for _, c := range cs {
		if c.Kind == CondNextUser || usesNext(c.Kids) {
			return true
		}
	}
	return false
}

// condList compiles a conjunction and orders it cheapest first; the order
// does not change the answer, only how soon a failing rule stops.
func (p *program) condList(cs []*Cond) []*cnode {
	out := make([]*cnode, len(cs))
	for i, c := range cs {
		out[i] = p.cond(c)
		out[i].pos = i
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].cost < out[j].cost })
	return out
}

func (p *program) cond(c *Cond) *cnode {
	p.uses |= 1 << c.Kind
	n := &cnode{kind: c.Kind, b: c.Bool, success: -1, src: c}
	switch c.Kind {
	case CondAll, CondAny, CondNot:
		n.kids = p.condList(c.Kids)
		for _, k := range n.kids {
			n.cost = max(n.cost, k.cost)
		}
	case CondPreviousError:
	case CondCall:
		n.min = c.Call.Min
		n.tools = newToolSet(c.Call.Tools)
		n.command, n.path, n.input = p.text(c.Call.Command), p.text(c.Call.Path), p.text(c.Call.Input)
		n.cost = 1 + max(n.command.costOf(), n.path.costOf(), n.input.costOf())
	case CondResult:
		r := c.Result
		n.min = r.Min
		n.tools = newToolSet(r.Tools)
		if r.Success != nil {
			n.success = 0
			if *r.Success {
				n.success = 1
			}
		}
		n.last = r.Last
		n.output, n.command = p.text(r.Output), p.text(r.Command)
		n.cost = 1 + max(n.output.costOf(), n.command.costOf())
	case CondUser, CondResponse, CondNextUser:
		n.text = p.text(c.Text)
		n.cost = 1 + n.text.costOf()
	case CondChanged, CondFailThenPass, CondChecked, CondFixedInTurn, CondPassesAgain, CondExercised:
		n.cost = 2
	case CondGit:
		for _, g := range c.Git {
			n.git |= 1 << slices.Index(GitKinds, g)
		}
		n.cost = 2
	}
	return n
}

func (t *tnode) costOf() int {
	if t == nil {
		return 0
	}
	return t.cost
}

func (p *program) text(t *Text) *tnode {
	if t == nil {
		return nil
	}
	n := &tnode{op: t.Op, leaf: -1}
	switch t.Op {
	case TextAll, TextAny, TextNot:
		for _, k := range t.Kids {
			kn := p.text(k)
			n.kids = append(n.kids, kn)
			n.cost = max(n.cost, kn.cost)
		}
		if t.Op == TextAll {
			sort.SliceStable(n.kids, func(i, j int) bool { return n.kids[i].cost < n.kids[j].cost })
		}
		return n
	}
	if t.Op == TextSays && len(t.Lexicons) > 1 {
		// Any of one leaf per lexicon: a lexicon that several says name
		// is scanned once per text.
		n.op = TextAny
		for _, lex := range t.Lexicons {
			kn := p.text(&Text{Op: TextSays, Lexicons: []string{lex}})
			n.kids = append(n.kids, kn)
			n.cost = max(n.cost, kn.cost)
		}
		return n
	}
	l := leaf{op: t.Op, fold: t.Fold, re: t.re, n: t.N}
	switch t.Op {
	case TextContains:
		l.ascii = true
		for _, s := range t.Needles {
			if t.Fold {
				s = strings.ToLower(s)
			}
			l.ascii = l.ascii && isASCII(s)
			l.needles = append(l.needles, s)
		}
		if t.Fold && l.ascii && len(l.needles) <= 64 {
			l.folder = newFoldSet(l.needles)
		}
		if !t.Fold && len(l.needles) >= minExactSet && len(l.needles) <= 64 && !slices.Contains(l.needles, "") {
			l.exact = newExactSet(l.needles)
		}
		n.cost = 2
		if t.Fold {
			n.cost = 3 // lower-cases the text once
		}
	case TextRegex:
		n.cost = 5
		l.pre = newPrefilter(t.Pattern, t.Fold)
	case TextLongerThan, TextShorterThan:
		n.cost = 1
	case TextSays:
		l.needles = append([]string(nil), t.Lexicons...)
		n.cost = 4
	}
	key := strconv.Itoa(int(l.op)) + "|" + strconv.FormatBool(l.fold) + "|" + strconv.Itoa(l.n) + "|" +
		t.Pattern + "|" + strings.Join(l.needles, "\x00")
	id, ok := p.index[key]
	if !ok {
		id = int32(len(p.leaves))
		p.leaves = append(p.leaves, l)
		p.index[key] = id
	}
	n.leaf = id
	return n
}

// text is one text of a turn with its lazily lower-cased forms and the memo
// of leaf answers: with nw words per half, bit i of memo[:nw] says leaf i
// was evaluated and bit i of memo[nw:] holds its answer.
type text struct {
	s     string
	memo  []uint64
	forms *textForms // nil until a lower-cased form is needed
	ascii int8       // 0 unknown, 1 yes, 2 no
	sk    int8       // foldsSK: 0 unknown, 1 yes, 2 no
}

// textForms are the lower-cased forms of a text, made on demand (most texts
// are searched without one).
type textForms struct {
	lower   string // strings.ToLower(s)
	alower  string // s with ASCII letters lower-cased
	prose   string // Prose(lower), for says
	lowered bool
	alowed  bool
	prosed  bool
}

func (t *text) isASCII() bool {
	if t.ascii == 0 {
		t.ascii = 2
		if isASCII(t.s) {
			t.ascii = 1
		}
	}
	return t.ascii == 1
}

// foldsSK reports whether the text holds ſ (U+017F) or the KELVIN SIGN
// (U+212A), the only non-ASCII runes whose case-fold orbits hold ASCII
// letters ('s' and 'k'): without them, a case-insensitive regex matches an
// ASCII literal only where the ASCII-lower-cased text holds it.
func (t *text) foldsSK() bool {
	if t.sk == 0 {
		t.sk = 2
		if !t.isASCII() && (strings.Contains(t.s, "\u017f") || strings.Contains(t.s, "\u212a")) {
			t.sk = 1
		}
	}
	return t.sk == 1
}

func (t *text) fm() *textForms {
	if t.forms == nil {
		t.forms = &textForms{}
	}
	return t.forms
}

// folded reports whether a lower-cased copy of the text exists.
func (t *text) folded() bool { return t.forms != nil && (t.forms.alowed || t.forms.lowered) }

// low is the Unicode lower-cased text.
func (t *text) low() string {
	f := t.fm()
	if !f.lowered {
		f.lower, f.lowered = strings.ToLower(t.s), true
	}
	return f.lower
}

// lowProse is the prose of the lower-cased text (Prose(low())).
func (t *text) lowProse() string {
	f := t.fm()
	if !f.prosed {
		f.prose, f.prosed = Prose(t.low()), true
	}
	return f.prose
}

// lowASCII is the text with only ASCII letters lower-cased. For an ASCII
// needle, containment in it equals containment in low() except for the two
// non-ASCII letters that lower-case to ASCII (KELVIN SIGN, LATIN CAPITAL I
// WITH DOT ABOVE), which it does not fold.
func (t *text) lowASCII() string {
	f := t.fm()
	if f.lowered {
		return f.lower
	}
	if !f.alowed {
		f.alower, f.alowed = asciiLower(t.s), true
	}
	return f.alower
}

// alignedLow is the text with only ASCII letters lower-cased, byte for
// byte where the text is (lowASCII may be the Unicode lower-cased text,
// whose bytes can move against the text's).
func (t *text) alignedLow() string {
	if t.isASCII() {
		return t.lowASCII() // both forms are the same
	}
	f := t.fm()
	if !f.alowed {
		f.alower, f.alowed = asciiLower(t.s), true
	}
	return f.alower
}

// asciiLower returns s with its ASCII letters lower-cased (s itself when
// it has no capital).
func asciiLower(s string) string {
	i := firstUpper(s)
	if i >= len(s) {
		return s
	}
	b := []byte(s)
	foldUpper(b[i:])
	return string(b)
}

// lowerInto returns s lower-cased for looking up ASCII needles: every
// ASCII string occurs in it exactly when it occurs in strings.ToLower(s).
// Lower-casing maps ASCII letters to ASCII and every other rune to non-ASCII
// runes, except U+0130 (İ) and U+212A (KELVIN SIGN), which become 'i' and
// 'k'; without them, folding the ASCII letters gives the same answers as the
// full Unicode mapping at a fraction of its cost on long tool outputs. It
// returns s itself when s has no ASCII capital, else writes into *buf
// (reused between calls): that string shares buf's memory and is valid only
// until the next call with the same buffer.
func lowerInto(buf *[]byte, s string) string {
	if strings.Contains(s, "\u0130") || strings.Contains(s, "\u212a") {
		return strings.ToLower(s)
	}
	i := firstUpper(s)
	if i >= len(s) {
		return s
	}
	b := append((*buf)[:0], s...)
	foldUpper(b[i:])
	*buf = b
	return unsafe.String(unsafe.SliceData(b), len(b))
}

const ones, highs = 0x0101010101010101, 0x8080808080808080

// upperMask has the high bit of every byte of w in 'A'..'Z'.
func upperMask(w uint64) uint64 {
	h := w &^ highs
	geA := h + (0x80-'A')*ones // high bit set where the byte >= 'A'
	gtZ := h + (0x7f-'Z')*ones // high bit set where the byte > 'Z'
	return (geA ^ gtZ) &^ w & highs
}

// firstUpper is the position of the first ASCII capital of s (len(s) for
// none), found eight bytes at a time.
func firstUpper(s string) int {
	i := 0
	for ; i+8 <= len(s); i += 8 {
		if upperMask(le64(s, i)) != 0 {
			break
		}
	}
	for ; i < len(s) && !('A' <= s[i] && s[i] <= 'Z'); i++ {
	}
	return i
}

// foldUpper lower-cases the ASCII letters of b in place.
func foldUpper(b []byte) {
	i := 0
	for ; i+8 <= len(b); i += 8 {
		w := binary.LittleEndian.Uint64(b[i:])
		binary.LittleEndian.PutUint64(b[i:], w|upperMask(w)>>2)
	}
	for ; i < len(b); i++ {
		if c := b[i]; 'A' <= c && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
}

// le64 reads eight bytes of s at i, little-endian.
func le64(s string, i int) uint64 {
	_ = s[i+7]
	return uint64(s[i]) | uint64(s[i+1])<<8 | uint64(s[i+2])<<16 | uint64(s[i+3])<<24 |
		uint64(s[i+4])<<32 | uint64(s[i+5])<<40 | uint64(s[i+6])<<48 | uint64(s[i+7])<<56
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}

func (t *text) leaf(l *leaf, id int32) bool {
	w, bit := id>>6, uint64(1)<<(id&63)
	known, val := t.memo[:len(t.memo)/2], t.memo[len(t.memo)/2:]
	if known[w]&bit != 0 {
		return val[w]&bit != 0
	}
	var v bool
	switch l.op {
	case TextContains:
		v = l.contains(t)
	case TextRegex:
		if l.pre != nil {
			v = l.pre.match(l.re, t)
		} else {
			v = l.re.MatchString(t.s)
		}
	case TextLongerThan:
		v = len(t.s) > l.n
	case TextShorterThan:
		v = len(t.s) < l.n
	case TextSays:
		for _, lex := range l.needles {
			if v = says(lex, t.lowProse()); v {
				break
			}
		}
	}
	known[w] |= bit
	if v {
		val[w] |= bit
	}
	return v
}

// contains reports whether the text holds one of the leaf's needles.
func (l *leaf) contains(t *text) bool {
	h := t.s
	switch {
	case l.folder != nil && !t.folded():
		// One pass, no lower-cased copy (unless another leaf made one).
		return l.folder.in(t.s)
	case l.exact != nil && len(t.s) <= 32*len(l.needles):
		return l.exact.in(t.s)
	case l.fold && l.ascii:
		h = t.lowASCII()
	case l.fold:
		h = t.low()
	}
	for _, nd := range l.needles {
		if strings.Contains(h, nd) {
			return true
		}
	}
	return false
}

type callFacts struct {
	name                 string
	command, path, input text
}

type resultFacts struct {
	name            string
	success         bool
	output, command text
}

// turnFacts are the texts of one turn that conditions look at.
type turnFacts struct {
	prevErr        bool
	user, response text
	// next is the next turn's prompt ("" for the last turn).
	next    text
	changed bool
	checked bool
	ftp     bool
	// fixed: a command failed, something changed, the command passed;
	// again: a program that failed in the previous turn passes in this one.
	fixed, again bool
	// exercised: a command that runs the change passed after it.
	exercised bool
	git       uint8
	calls     []callFacts
	results   []resultFacts
}

// factScratch holds the arrays of one evaluation's facts; evaluations
// take them from factPool and give them back cleared, so that evaluating a
// transcript allocates nothing for its facts once the arrays have grown.
type factScratch struct {
	slab    []uint64
	calls   []callFacts
	results []resultFacts
	turns   []turnFacts
	cmds    commandIndex
}

var factPool = sync.Pool{New: func() any { return &factScratch{} }}

// sized returns s with length n, reallocated when too small; the pool
// hands out cleared arrays.
func sized[T any](s []T, n int) []T {
	if cap(s) < n {
		return make([]T, n)
	}
	return s[:n]
}

// release clears the arrays (they must not keep transcripts alive) and
// returns them to the pool.
func (fs *factScratch) release() {
	clear(fs.slab)
	clear(fs.calls)
	clear(fs.results)
	clear(fs.turns)
	fs.cmds.release()
	factPool.Put(fs)
}

// facts builds the facts of every turn, with one memo slab for all texts,
// in arrays from the pool: fs.release() once the facts are no longer used.
func (p *program) facts(turns []transcript.Turn) (out []turnFacts, fs *factScratch) {
	nw := (len(p.leaves) + 63) / 64
	ncalls, nresults := 0, 0
	for i := range turns {
		ncalls += len(turns[i].ToolCalls)
		nresults += len(turns[i].ToolResults)
	}
	fs = factPool.Get().(*factScratch)
	fs.slab = sized(fs.slab, 2*(3*len(turns)+3*ncalls+2*nresults)*nw)
	fs.calls = sized(fs.calls, ncalls)
	fs.results = sized(fs.results, nresults)
	fs.turns = sized(fs.turns, len(turns))
	slab, calls, results, cmds, out := fs.slab, fs.calls, fs.results, &fs.cmds, fs.turns
	take := func(s string) text {
		t := text{s: s, memo: slab[: 2*nw : 2*nw]}
		slab = slab[2*nw:]
		return t
	}
	for i := range turns {
		t := &turns[i]
		f := &out[i]
		f.prevErr = t.PreviousError
		f.user, f.response = take(t.UserMessage), take(t.AssistantResponse)
		next := ""
		if i+1 < len(turns) {
			next = turns[i+1].UserMessage
		}
		f.next = take(next)
		if p.uses&(1<<CondChanged|1<<CondChecked) != 0 {
			files, checked := changes(t)
			f.changed, f.checked = len(files) > 0, checked
		}
		if p.uses&(1<<CondFailThenPass) != 0 {
			f.ftp = FailThenPass(t)
		}
		if p.uses&(1<<CondFixedInTurn) != 0 {
			f.fixed = FixedInTurn(t)
		}
		if p.uses&(1<<CondExercised) != 0 {
			f.exercised = Exercised(t)
		}
		if p.uses&(1<<CondPassesAgain) != 0 && i > 0 {
			f.again = PassesAgain(&turns[i-1], t) != ""
		}
		if p.uses&(1<<CondGit) != 0 {
			for _, g := range GitMilestones(t) {
				f.git |= 1 << slices.Index(GitKinds, g)
			}
		}
		f.calls, calls = calls[:len(t.ToolCalls):len(t.ToolCalls)], calls[len(t.ToolCalls):]
		for j := range t.ToolCalls {
			c := &t.ToolCalls[j]
			f.calls[j] = callFacts{name: c.Name, command: take(c.Command), path: take(c.Path), input: take(c.Input)}
		}
		cmds.reset(t)
		f.results, results = results[:len(t.ToolResults):len(t.ToolResults)], results[len(t.ToolResults):]
		for j := range t.ToolResults {
			r := &t.ToolResults[j]
			f.results[j] = resultFacts{name: r.Name, success: r.Success, output: take(r.Output), command: take(cmds.command(r.ID))}
		}
	}
	return out, fs
}

// commandIndex answers which command a tool result of a turn answers: the
// command of the last tool call with the result's id that has one. A turn
// of few calls is searched directly; a map is built for one of many.
type commandIndex struct {
	t      *transcript.Turn
	m      map[string]string
	mapped bool // m holds t's commands
}

// maxScanCalls is the number of tool calls up to which a turn's calls are
// searched one by one instead of indexed by a map.
const maxScanCalls = 32

// reset makes the index answer for turn t.
func (ci *commandIndex) reset(t *transcript.Turn) {
	ci.t = t
	if ci.mapped {
		clear(ci.m)
		ci.mapped = false
	}
	if len(t.ToolCalls) <= maxScanCalls {
		return
	}
	if ci.m == nil {
		ci.m = map[string]string{}
	}
	for j := range t.ToolCalls {
		if c := &t.ToolCalls[j]; c.Command != "" {
			ci.m[c.ID] = c.Command
		}
	}
	ci.mapped = true
}

// release forgets the turn (the index is kept in a pool).
func (ci *commandIndex) release() {
	if ci.mapped {
		clear(ci.m)
	}
	ci.t, ci.mapped = nil, false
}

// command is the command the result with the given id answers ("" for
// none).
func (ci *commandIndex) command(id string) string {
	if ci.mapped {
		return ci.m[id]
	}
	calls := ci.t.ToolCalls
	for j := len(calls) - 1; j >= 0; j-- {
		if c := &calls[j]; c.ID == id && c.Command != "" {
			return c.Command
		}
	}
	return ""
}

// holds evaluates a compiled condition on a turn.
func (p *program) holds(n *cnode, f *turnFacts) bool {
	switch n.kind {
	case CondAll:
		for _, k := range n.kids {
			if !p.holds(k, f) {
				return false
			}
		}
		return true
	case CondAny:
		for _, k := range n.kids {
			if p.holds(k, f) {
				return true
			}
		}
		return false
	case CondNot:
		return !p.holds(n.kids[0], f)
	case CondPreviousError:
		return f.prevErr == n.b
	case CondCall:
		if len(f.calls) < n.min {
			return false
		}
		k := 0
		for i := range f.calls {
			if p.callMatches(n, &f.calls[i]) {
				if k++; k >= n.min {
					return true
				}
			}
		}
		return false
	case CondResult:
		rs := f.results
		if n.last && len(rs) > 0 {
			rs = rs[len(rs)-1:]
		}
		if len(rs) < n.min {
			return false
		}
		k := 0
		for i := range rs {
			if p.resultMatches(n, &rs[i]) {
				if k++; k >= n.min {
					return true
				}
			}
		}
		return false
	case CondUser:
		return p.match(n.text, &f.user)
	case CondResponse:
		return p.match(n.text, &f.response)
	case CondNextUser:
		return p.match(n.text, &f.next)
	case CondChanged:
		return f.changed == n.b
	case CondFailThenPass:
		return f.ftp == n.b
	case CondChecked:
		return f.checked == n.b
	case CondFixedInTurn:
		return f.fixed == n.b
	case CondPassesAgain:
		return f.again == n.b
	case CondExercised:
		return f.exercised == n.b
	case CondGit:
		return f.git&n.git != 0
	}
	return false
}

// noText is the empty text with its own memo: the next prompt of a turn at
// the end of a window, which at a compaction point has not been recorded
// yet. Being the same text for every turn, it is shared by them.
func (p *program) noText() text {
	nw := (len(p.leaves) + 63) / 64
	m := make([]uint64, 2*nw)
	return text{memo: m}
}

func (p *program) callMatches(n *cnode, c *callFacts) bool {
	return n.tools.match(c.name) &&
		(n.command == nil || p.match(n.command, &c.command)) &&
		(n.path == nil || p.match(n.path, &c.path)) &&
		(n.input == nil || p.match(n.input, &c.input))
}

func (p *program) resultMatches(n *cnode, r *resultFacts) bool {
	return n.tools.match(r.name) &&
		(n.success < 0 || r.success == (n.success == 1)) &&
		(n.command == nil || p.match(n.command, &r.command)) &&
		(n.output == nil || p.match(n.output, &r.output))
}

// match evaluates a text matcher.
func (p *program) match(n *tnode, t *text) bool {
	switch n.op {
	case TextAll:
		for _, k := range n.kids {
			if !p.match(k, t) {
				return false
			}
		}
		return true
	case TextAny:
		for _, k := range n.kids {
			if p.match(k, t) {
				return true
			}
		}
		return false
	case TextNot:
		return !p.match(n.kids[0], t)
	}
	return t.leaf(&p.leaves[n.leaf], n.leaf)
}
