package compaction

import (
	"bytes"
	"math/bits"
	"strings"

	"github.com/compactbench/compactbench/internal/transcript"
)

// Need recall asks: of the facts a compaction dropped that the session used
// again later, how many does the compacted context still hold?
//
// The extractor finds six kinds of fact in a message's model-visible text
// (text, tool inputs and commands, tool outputs, injected text, thinking):
//
//   - path: a word with a slash that looks like a file path (absolute,
//     ~/ or ./ relative, a Windows drive path, or a relative path whose last
//     part has an extension), or a bare file name with a common source or
//     config extension (auth.go, package.json); plus the path field of every
//     tool call;
//   - ident: an identifier of code, five characters or more: camelCase or
//     PascalCase (a lower-case letter followed by an upper-case one), or
//     snake_case / SCREAMING_CASE with an inner underscore (parseConfig,
//     TokenRuler, get_user, MAX_RETRIES); JSON keys are not facts;
//   - url: a word starting with http:// or https://;
//   - error: the first line of a failed tool result, and lines of any tool
//     output that name an error (error, exception, traceback, panic, fatal,
//     fail, in any case), at most five per output, 8–300 characters;
//   - command: the first line of a shell command a tool call ran;
//   - constraint: a sentence of a user prompt that sets a rule ("don't …",
//     "never …", "always …", "must …", "make sure …", "avoid …", "only …",
//     "instead of …"), up to 200 characters.
//
// A fact is needed later when it occurs again after the compaction point:
// path, ident and url when a later message contains the same word; error
// and command when a later message has the same line (or runs the same
// command). A constraint stands for the rest of the session, so it is needed
// whenever the session goes on. A needed fact is kept when the compacted
// context holds it: a recorded message kept verbatim that contains it, or
// text the strategy wrote (a summary) that contains it: as the same word
// for paths, identifiers and URLs (the extractor run on that text finds
// it), as a substring for error lines, commands and constraints.
//
// Matching is case-sensitive and as written, with one leniency: a path is
// also kept when its file name (with an extension) is held, since a summary
// that says auth.go still lets the agent find /home/u/p/auth.go. A later
// occurrence must be exact.

// FactKind is the kind of a fact.
type FactKind uint8

// Fact kinds, in report order.
const (
	FactPath FactKind = iota
	FactIdent
	FactURL
	FactError
	FactCommand
	FactConstraint
	numFactKinds
)

var factKindNames = [numFactKinds]string{"path", "ident", "url", "error", "command", "constraint"}

// String is the kind's name in reports.
func (k FactKind) String() string { return factKindNames[k] }

// isLine reports whether facts of the kind are matched as whole lines.
func (k FactKind) isLine() bool { return k >= FactError }

// Fact is one extracted fact.
type Fact struct {
	Kind FactKind
	Text string
}

// FactIndex holds the facts of every recorded message and where each occurs.
// Each distinct fact has an id (its index in facts), so that measuring a
// compaction dedupes and looks facts up by id, without hashing them; facts
// only text a strategy wrote has get an id when measured (intern).
type FactIndex struct {
	facts []Fact
	// ids are the ids of the facts, by kind and text (string keys hash
	// faster than Fact keys).
	ids [numFactKinds]map[string]int32
	// perMsg are the ids of the distinct facts extracted from each message.
	perMsg [][]int32
	// occ lists, per fact id, the messages the fact occurs in, ascending: for
	// a word fact the messages it was extracted from, for a line fact the
	// messages that have its line (lines).
	occ [][]int32
	// base is, per fact id, the id of the file name that stands for a path
	// fact (pathBase), or -1.
	base []int32
	// lines numbers the trimmed lines that can be line facts; lineOcc
	// lists, per line number, the messages that have the line, ascending.
	lines   map[string]int32
	lineOcc [][]int32
}

// lineOccurrences lists the messages that have a line, or nil.
func (ix *FactIndex) lineOccurrences(l string) []int32 {
	if n, ok := ix.lines[l]; ok {
		return ix.lineOcc[n]
	}
	return nil
}

// IndexFacts extracts and indexes the facts of a transcript.
func IndexFacts(t *transcript.Transcript) *FactIndex {
	// The maps and lists are sized for a transcript's usual number of
	// facts (about one distinct path and one identifier per 500 bytes of
	// text, a distinct fact in a message per 100), which saves most of
	// their growing.
	size := 0
	for i := range t.Messages {
		for j := range t.Messages[i].Blocks {
			b := &t.Messages[i].Blocks[j]
			size += len(b.Text) + len(b.Input)
		}
	}
	ix := &FactIndex{perMsg: make([][]int32, len(t.Messages)), lines: make(map[string]int32, size/2048)}
	for k := range ix.ids {
		hint := size / 8192 // URLs, error lines, commands, constraints
		if k := FactKind(k); k == FactPath || k == FactIdent {
			hint = size / 512
		}
		ix.ids[k] = make(map[string]int32, hint)
	}
	ix.facts = make([]Fact, 0, size/256)
	per, start := ix.extractAll(t, size)
	for i := range t.Messages {
		if start[i] < start[i+1] {
			ix.perMsg[i] = per[start[i]:start[i+1]:start[i+1]]
		}
	}
	n := len(ix.facts)
	// The file names of paths (baseOf) join the facts below: room for
	// them saves copying occ and base as they grow.
	room := n + n/2 + 8
	ix.occ = occurrences(per, start, n, room)
	ix.base = make([]int32, n, room)
	for id := range n {
		f := ix.facts[id]
		if f.Kind.isLine() {
			ix.occ[id] = ix.lineOccurrences(f.Text) // a line occurs where any message has it
		}
		b := ix.baseOf(f) // may add the file name: ix.base grows
		ix.base[id] = b
	}
	return ix
}

// extractAll extracts every message's facts, giving each distinct fact an
// id: per lists the distinct fact ids of every message, in message order,
// message i's from start[i] to start[i+1]. Lines that can be line facts are
// indexed in ix.lines.
func (ix *FactIndex) extractAll(t *transcript.Transcript, size int) (per []int32, start []int) {
	in := indexer{ix: ix, last: make([]int32, 0, cap(ix.facts)), per: make([]int32, 0, size/100),
		lineLast: make([]int32, 0, size/2048), linePer: make([]int32, 0, size/1024)}
	ex := extractor{idx: &in}
	start = make([]int, len(t.Messages)+1)
	lineStart := make([]int, len(t.Messages)+1)
	for i := range t.Messages {
		in.mi = int32(i)
		ex.message(&t.Messages[i])
		start[i+1] = len(in.per)
		lineStart[i+1] = len(in.linePer)
	}
	ix.lineOcc = occurrences(in.linePer, lineStart, len(in.lineLast), len(in.lineLast))
	return in.per, start
}

// indexer receives an extractor's facts and lines while IndexFacts runs:
// it gives each distinct fact an id and lists each message's distinct ids.
type indexer struct {
	ix   *FactIndex
	mi   int32   // the message being indexed
	last []int32 // per fact id, the last message it was found in
	per  []int32 // the distinct fact ids of every message so far
	// lineLast and linePer are last and per for line numbers (ix.lines).
	lineLast, linePer []int32
}

// fact takes a fact found in the current message: one lookup per
// occurrence; a fact is new to this message when it was last found in an
// earlier one.
func (in *indexer) fact(f Fact) {
	ix := in.ix
	ids := ix.ids[f.Kind]
	id, ok := ids[f.Text]
	if !ok {
		id = int32(len(ix.facts))
		ids[f.Text] = id
		ix.facts = append(ix.facts, f)
		in.last = append(in.last, -1)
	}
	if in.last[id] != in.mi {
		in.last[id] = in.mi
		in.per = append(in.per, id)
	}
}

// line notes a line that can be a line fact in the current message.
func (in *indexer) line(l string) {
	n, ok := in.ix.lines[l]
	if !ok {
		n = int32(len(in.lineLast))
		in.ix.lines[l] = n
		in.lineLast = append(in.lineLast, -1)
	}
	if in.lineLast[n] != in.mi {
		in.lineLast[n] = in.mi
		in.linePer = append(in.linePer, n)
	}
}

// occurrences lists, for each of n fact ids, the messages it was found in,
// ascending, all in one array (per and start as extractAll returns them),
// in a slice of capacity c ≥ n.
func occurrences(per []int32, start []int, n, c int) [][]int32 {
	at := make([]int32, n+1) // at[id] is where id's list begins in flat
	for _, id := range per {
		at[id+1]++
	}
	for id := 1; id <= n; id++ {
		at[id] += at[id-1]
	}
	flat := make([]int32, len(per))
	next := append([]int32(nil), at[:n]...)
	for i := 0; i+1 < len(start); i++ {
		for _, id := range per[start[i]:start[i+1]] {
			flat[next[id]] = int32(i)
			next[id]++
		}
	}
	occ := make([][]int32, n, c)
	for id := range n {
		if at[id] < at[id+1] {
			occ[id] = flat[at[id]:at[id+1]:at[id+1]]
		}
	}
	return occ
}

// intern returns a fact's id, adding the fact when the recording does not
// have it (a fact of text a strategy wrote, a path's file name).
func (ix *FactIndex) intern(f Fact) int32 {
	if id, ok := ix.ids[f.Kind][f.Text]; ok {
		return id
	}
	base := ix.baseOf(f) // the file name first: it may be new too
	id := int32(len(ix.facts))
	ix.ids[f.Kind][f.Text] = id
	ix.facts = append(ix.facts, f)
	var occ []int32
	if f.Kind.isLine() {
		occ = ix.lineOccurrences(f.Text)
	}
	ix.occ = append(ix.occ, occ)
	ix.base = append(ix.base, base)
	return id
}

// baseOf is the id of the file name standing for a path fact, or -1.
func (ix *FactIndex) baseOf(f Fact) int32 {
	if b := pathBase(f); b != "" {
		return ix.intern(Fact{FactPath, b})
	}
	return -1
}

// neededAfter reports whether a fact occurs in a message at index ≥ from.
// Constraints stand: they are needed when any message is left.
func (ix *FactIndex) neededAfter(id int32, from, nmsgs int) bool {
	if ix.facts[id].Kind == FactConstraint {
		return from < nmsgs
	}
	occ := ix.occ[id]
	return len(occ) > 0 && int(occ[len(occ)-1]) >= from
}

// heldBy reports whether a recorded message kept verbatim has the fact.
func (ix *FactIndex) heldBy(id int32, verbatim func(int) bool) bool {
	if ix.facts[id].Kind == FactConstraint {
		return false // checked as text
	}
	for _, i := range ix.occ[id] {
		if verbatim(int(i)) {
			return true
		}
	}
	return false
}

// ExtractFacts returns the distinct facts of a text a strategy wrote or of
// any message, in first-seen order.
func ExtractFacts(m *transcript.Message) []Fact {
	var ex extractor
	return ex.message(m)
}

// extractor finds facts; it reuses its scratch maps between messages.
type extractor struct {
	// seen dedupes facts within a message: a fact is seen when its stamp
	// equals gen (no clearing between messages).
	seen map[Fact]uint32
	gen  uint32
	out  []Fact
	// lineFn, when set, receives every line that can be a line fact
	// (commands, error-looking lines), for the occurrence index.
	lineFn func(string)
	// idx, when set, receives every fact found (repeats included) and
	// every line that can be a line fact, instead of out and lineFn.
	idx *indexer
	// emit, when set, receives every fact found (repeats included) instead
	// of the deduplicated out list.
	emit func(Fact)
	cues cueText
	// sents is the reused list of a prompt's sentences (constraints).
	sents []string
}

// lines reports whether the extractor passes on lines for the occurrence
// index.
func (ex *extractor) lines() bool { return ex.lineFn != nil || ex.idx != nil }

// line passes on a line that can be a line fact.
func (ex *extractor) line(l string) {
	if ex.idx != nil {
		ex.idx.line(l)
	} else if ex.lineFn != nil {
		ex.lineFn(l)
	}
}

func (ex *extractor) add(k FactKind, s string) {
	f := Fact{k, s}
	if ex.idx != nil {
		ex.idx.fact(f)
		return
	}
	if ex.emit != nil {
		ex.emit(f)
		return
	}
	if ex.seen[f] != ex.gen {
		ex.seen[f] = ex.gen
		ex.out = append(ex.out, f)
	}
}

func (ex *extractor) message(m *transcript.Message) []Fact {
	if ex.seen == nil {
		ex.seen = map[Fact]uint32{}
	}
	ex.gen++
	ex.out = nil
	for i := range m.Blocks {
		b := &m.Blocks[i]
		switch b.Kind {
		case transcript.BlockToolUse:
			ex.words(b.Input)
			if b.Path != "" {
				ex.add(FactPath, b.Path)
			}
			if c := firstLine(b.Command); len(c) >= 2 {
				c = clip(c, 300)
				ex.add(FactCommand, c)
				ex.line(c)
			}
		case transcript.BlockToolResult:
			ex.words(b.Text)
			ex.errorLines(b.Text, b.IsError, 5)
		default:
			ex.words(b.Text)
			if ex.lines() {
				ex.errorLines(b.Text, false, 0)
			}
			if m.Role == transcript.RoleUser && !m.IsMeta && b.Kind == transcript.BlockText {
				ex.constraints(b.Text)
			}
		}
	}
	return ex.out
}

// errorLines adds the first line of a failed output and up to limit
// error-looking lines as facts, and passes every error-looking line to
// lineFn. It searches the text for error words (errorAt) and looks only at
// the lines that have one: a line's trimming removes no letter, so it looks
// like an error exactly when it holds an error word.
func (ex *extractor) errorLines(text string, failed bool, limit int) {
	if failed {
		if l := strings.TrimSpace(firstLine(text)); len(l) >= 8 && len(l) <= 300 {
			ex.add(FactError, l)
		}
	}
	n := 0
	lines := ex.lines()
	for len(text) > 0 && (n < limit || lines) {
		at := errorAt(text)
		if at < 0 {
			return
		}
		start := strings.LastIndexByte(text[:at], '\n') + 1
		line := text[start:]
		if j := strings.IndexByte(line, '\n'); j >= 0 {
			line, text = line[:j], line[j+1:]
		} else {
			text = ""
		}
		if len(line) < 8 {
			continue
		}
		line = strings.TrimSpace(line)
		if len(line) < 8 || len(line) > 300 {
			continue
		}
		if lines {
			ex.line(line)
		}
		if n < limit {
			ex.add(FactError, line)
			n++
		}
	}
}

// errorLead marks the first letters of the error words, either case.
var errorLead = func() (t [256]bool) {
	for _, c := range "etpfETPF" {
		t[c] = true
	}
	return t
}()

// errorAt is the index of the first error word in s (error, exception,
// traceback, panic, fatal, fail, ignoring ASCII case), or -1. It looks
// eight positions at a time for the words' first two letters (er, ex, tr,
// pa, fa, either case), reading the eight bytes and, one byte on, the
// eight that follow each, and checks the whole word only there.
func errorAt(s string) int {
	i := 0
	for ; i+9 <= len(s); i += 8 {
		x := load64(s, i) | lsb*0x20   // ASCII letters lower-cased
		y := load64(s, i+1) | lsb*0x20 // the byte after each of x's
		// hasBytes may mark too many (each candidate is checked), never
		// too few.
		r, a := hasBytes(y, 'r'), hasBytes(y, 'a')
		c := hasBytes(x, 'e')&(r|hasBytes(y, 'x')) | hasBytes(x, 't')&r | (hasBytes(x, 'p')|hasBytes(x, 'f'))&a
		for ; c != 0; c &= c - 1 {
			if k := i + bits.TrailingZeros64(c)/8; errorWordAt(s[k:]) {
				return k
			}
		}
	}
	for ; i+4 <= len(s); i++ {
		if errorLead[s[i]] && errorWordAt(s[i:]) {
			return i
		}
	}
	return -1
}

// errorWordAt reports whether w starts with an error word, its first letter
// being one of them (errorLead).
func errorWordAt(w string) bool {
	switch w[0] | 0x20 {
	case 'e':
		return hasFold(w, "error") || hasFold(w, "exception")
	case 't':
		return hasFold(w, "traceback")
	case 'p':
		return hasFold(w, "panic")
	case 'f':
		return hasFold(w, "fatal") || hasFold(w, "fail")
	}
	return false
}

// hasFold reports whether s starts with the lower-case ASCII word w,
// ignoring case.
func hasFold(s, w string) bool {
	if len(s) < len(w) {
		return false
	}
	for j := 1; j < len(w); j++ {
		if c := s[j]; c != w[j] && c|0x20 != w[j] {
			return false
		}
	}
	return true
}

var constraintCues = []string{"don't ", "do not ", "dont ", "never ", "always ", "must ", "make sure ",
	"avoid ", "only use ", "only ", "instead of ", "shouldn't ", "should not ", "without "}

// constraints adds the sentences of a prompt that set a rule: a cue at
// the start of the sentence or after a space (the sentence lower-cased,
// with a space after it).
func (ex *extractor) constraints(text string) {
	ex.sents = appendSentences(ex.sents[:0], text)
	for _, s := range ex.sents {
		if ex.cues.hasWordCue("", s, " ") {
			ex.add(FactConstraint, clip(s, 200))
		}
	}
}

// constraintCueBytes are constraintCues as bytes.
var constraintCueBytes = func() (plain [][]byte) {
	for _, c := range constraintCues {
		plain = append(plain, []byte(c))
	}
	return plain
}()

// cueText lower-cases sentences for cue lookups into a reused buffer. The
// cues are ASCII: an ASCII string occurs in s with its ASCII letters
// lower-cased exactly when it occurs in strings.ToLower(s) (which maps
// every other rune to non-ASCII runes), except for U+0130 and U+212A,
// which lower-case to 'i' and 'k': text holding them takes ToLower.
type cueText struct{ buf []byte }

// lower is pre + s lower-cased + post.
func (c *cueText) lower(pre, s, post string) []byte {
	b := append(c.buf[:0], pre...)
	if strings.Contains(s, "\u0130") || strings.Contains(s, "\u212a") {
		b = append(b, strings.ToLower(s)...)
	} else {
		for i := 0; i < len(s); i++ {
			ch := s[i]
			if ch-'A' < 26 {
				ch += 'a' - 'A'
			}
			b = append(b, ch)
		}
	}
	b = append(b, post...)
	c.buf = b
	return b
}

// hasWordCue reports whether pre + s lower-cased + post starts with a
// constraint cue or has one after a space. One pass looks at each word's
// start (the text's start and every byte after a space) and tries only the
// cues that begin with its byte, where a search per cue would stop at
// every space of the text for each of them.
func (c *cueText) hasWordCue(pre, s, post string) bool {
	l := c.lower(pre, s, post)
	start := true
	for i, ch := range l {
		if start {
			for _, cue := range cuesByFirst[ch] {
				if bytes.HasPrefix(l[i:], cue) {
					return true
				}
			}
		}
		start = ch == ' '
	}
	return false
}

// cuesByFirst lists constraintCueBytes by their first byte.
var cuesByFirst = func() (t [256][][]byte) {
	for _, cue := range constraintCueBytes {
		t[cue[0]] = append(t[cue[0]], cue)
	}
	return t
}()

// sentences splits text at . ! ? and newlines, trimmed, non-empty.
func sentences(text string) []string { return appendSentences(nil, text) }

// appendSentences appends the sentences of text to out.
func appendSentences(out []string, text string) []string {
	start := 0
	for i := 0; i <= len(text); i++ {
		if i == len(text) || text[i] == '\n' || ((text[i] == '.' || text[i] == '!' || text[i] == '?') &&
			(i+1 == len(text) || text[i+1] == ' ' || text[i+1] == '\n')) {
			if s := strings.TrimSpace(text[start:i]); len(s) >= 6 {
				out = append(out, s)
			}
			start = i + 1
		}
	}
	return out
}

// words scans text for path, identifier and URL words. Only words with a
// slash, backslash, dot or colon (paths, URLs, dotted or positioned names)
// or an underscore or an upper-case letter after a lower-case one
// (identifiers) can be facts: it finds the next byte that makes a word so
// (nextWordHit, eight bytes at a time) and looks only at the word around
// it, skipping the plain words between.
func (ex *extractor) words(text string) {
	for pos := 0; ; {
		h := nextWordHit(text, pos)
		if h < 0 {
			return
		}
		i := h
		for i > pos && wordClass[text[i-1]]&classSep == 0 {
			i--
		}
		// One pass over the word finds its end and its shape: the classes
		// of its bytes, and whether an upper-case letter follows a
		// lower-case one (hump: classLower moved onto classUpper).
		var seen, hump, prev uint16
		j := i
		for ; j < len(text); j++ {
			c := wordClass[text[j]]
			if c&classSep != 0 {
				break
			}
			hump |= c & (prev >> 1)
			seen |= c
			prev = c
		}
		pos = j
		// A JSON key ("file_path": ...) is structure, not a fact.
		if j-i < 3 || j+1 < len(text) && text[j] == '"' && text[j+1] == ':' {
			continue
		}
		w := text[i:j]
		identy := seen&classIdent != 0 || hump&classUpper != 0
		switch {
		case seen&classPath != 0:
			// A plain word (no slash, no dot before its trailing . : ?)
			// without an identifier's shape holds no fact.
			if identy || seen&classSlash != 0 || seen&classDot != 0 && dotBeforeEnd(w) {
				ex.word(w, seen)
			}
		case identy && seen&classOther == 0:
			// The word is one run of identifier bytes, whose shape the
			// pass found: ident's judgement without its pass.
			if len(w) >= 5 && w[0]-'0' > 9 && (seen&classIdent == 0 || identWithUnderscore(w, hump&classUpper != 0)) {
				ex.add(FactIdent, w)
			}
		case identy:
			ex.ident(w)
		}
	}
}

// dotBeforeEnd reports whether w has a dot before its last byte other
// than . : ? (a word that is not plain by plainWord, given it has no slash).
func dotBeforeEnd(w string) bool {
	k := len(w) - 1
	for k >= 0 && wordClass[w[k]]&classTrim != 0 {
		k--
	}
	return k > 0 && strings.IndexByte(w[:k], '.') >= 0
}

// SWAR constants: a one in every byte, and the high bit of every byte.
const (
	lsb uint64 = 0x0101010101010101
	msb uint64 = 0x8080808080808080
)

// load64 reads s[k:k+8] as a little-endian word.
// (Slicing first leaves one bounds check where s[k+7] left eight.)
func load64(s string, k int) uint64 {
	s = s[k : k+8]
	return uint64(s[0]) | uint64(s[1])<<8 | uint64(s[2])<<16 | uint64(s[3])<<24 |
		uint64(s[4])<<32 | uint64(s[5])<<40 | uint64(s[6])<<48 | uint64(s[7])<<56
}

// hasBytes sets the high bit of the bytes of x equal to c, and may set it
// of bytes above one that is (a borrow runs up): its lowest mark is always
// right, and it misses none. Cheaper than an exact match, for searches that
// take the lowest mark or check each.
func hasBytes(x uint64, c byte) uint64 {
	t := x ^ lsb*uint64(c)
	return (t - lsb) &^ t & msb
}

// rangeBytes sets the high bit of exactly the bytes of x in [lo, hi]
// (lo ≤ hi < 0x80).
func rangeBytes(x uint64, lo, hi byte) uint64 {
	t := x &^ msb
	ge := t + lsb*uint64(0x80-lo) // high bit: t ≥ lo
	gt := t + lsb*uint64(0x7f-hi) // high bit: t > hi
	return ge &^ gt &^ x & msb
}

// nextWordHit is the index of the first byte at or after from that makes
// its word a candidate (a path byte / \ . :, an underscore, or an
// upper-case letter after a lower-case one), or -1. from is 0 or a
// separator's index.
func nextWordHit(text string, from int) int {
	k := from
	var carry uint64 // high bit of byte 0: text[k-1] is a lower-case letter
	if k > 0 && text[k-1]-'a' < 26 {
		carry = 0x80
	}
	for ; k+8 <= len(text); k += 8 {
		x := load64(text, k)
		// ASCII letters of either case; bit 5 (0x20) of a letter, moved
		// onto the high bit, tells lower from upper case.
		letter, low := rangeBytes(x|lsb*0x20, 'a', 'z'), x<<2
		lower := letter & low
		// The lowest mark of hasBytes is right; the lowest of hits is.
		hits := letter&^low&(lower<<8|carry) | rangeBytes(x, '.', '/') |
			hasBytes(x, ':') | hasBytes(x, '\\') | hasBytes(x, '_')
		if hits != 0 {
			return k + bits.TrailingZeros64(hits)/8
		}
		carry = lower >> 56
	}
	for ; k < len(text); k++ {
		c := wordClass[text[k]]
		if c&(classPath|classIdent) != 0 || c&classUpper != 0 && k > 0 && wordClass[text[k-1]]&classLower != 0 {
			return k
		}
	}
	return -1
}

// sepTable marks bytes that end a word: whitespace, quotes, brackets and
// punctuation that do not occur inside paths, URLs or identifiers.
var sepTable = func() (t [256]bool) {
	for c := 0; c < ' '; c++ {
		t[c] = true
	}
	for _, c := range " \t\n\r\"'`()[]{}<>,;|=*!^" {
		t[c] = true
	}
	return t
}()

// wordClass classifies bytes for words: separators (sepTable), the bytes
// that make a word path-like (/ \ . :) or identifier-like (_), and upper-
// and lower-case ASCII letters (an upper after a lower is identifier-like),
// plus the bytes words tells plain words by (plainWord): slashes, the dot,
// and the bytes word trims from a word's end.
const (
	classSep = 1 << iota
	classPath
	classIdent
	classUpper // classLower >> 1, for words' hump
	classLower
	classSlash // / and \
	classDot   // .
	classTrim  // . : ?, which word trims from a word's end
	classColon // :
	classBack  // \
	classOther // not a separator, letter, digit or underscore (ends an identifier's run)
)

var wordClass = func() (t [256]uint16) {
	for c := range 256 {
		switch {
		case sepTable[c]:
			t[c] = classSep
		case c == '/':
			t[c] = classPath | classSlash
		case c == '\\':
			t[c] = classPath | classSlash | classBack
		case c == '.':
			t[c] = classPath | classDot | classTrim
		case c == ':':
			t[c] = classPath | classTrim | classColon
		case c == '?':
			t[c] = classTrim
		case c == '_':
			t[c] = classIdent
		case c >= 'A' && c <= 'Z':
			t[c] = classUpper
		case c >= 'a' && c <= 'z':
			t[c] = classLower
		}
		if !sepTable[c] && identClass[c] == 0 {
			t[c] |= classOther
		}
	}
	return t
}()

// plainWord reports whether word can hold no fact when it has no
// identifier shape (an underscore, or an upper-case letter after a
// lower-case one): it has no slash or backslash (no path, URL or drive) and
// no dot but at its end (no file name). Such words ("done.", "Note:") are
// most of prose's path-like words; word would find nothing in them.
func plainWord(w string) bool {
	return strings.IndexByte(w, '/') < 0 && strings.IndexByte(w, '\\') < 0 &&
		strings.IndexByte(strings.TrimRight(w, ".:?"), '.') < 0
}

// word judges a path-like word; shape has (at least) the classes of its
// bytes (wordClass), which spare it the searches for bytes it lacks.
func (ex *extractor) word(w string, shape uint16) {
	for len(w) > 0 {
		if c := w[len(w)-1]; c == '.' || c == ':' || c == '?' {
			w = w[:len(w)-1]
			continue
		}
		break
	}
	for len(w) > 0 && w[0] == ':' {
		w = w[1:]
	}
	if len(w) < 3 {
		return
	}
	if strings.HasPrefix(w, "http://") || strings.HasPrefix(w, "https://") {
		ex.add(FactURL, clip(w, 300))
		return
	}
	if shape&classColon != 0 {
		w = stripLineSuffix(w)
		if k := colons(w); k > 0 { // tests/a.py::test_x, pkg::mod::f
			ex.word(w[:k], shape)
			ex.word(w[k+2:], shape)
			return
		}
	}
	if isPath(w, shape) {
		ex.add(FactPath, w)
		return
	}
	ex.ident(w)
}

// colons is strings.Index(w, "::"), looking for a colon first: most words
// have none.
func colons(w string) int {
	c := strings.IndexByte(w, ':')
	if c < 0 {
		return -1
	}
	if k := strings.Index(w[c:], "::"); k >= 0 {
		return c + k
	}
	return -1
}

// ident adds the identifiers of a word, also inside dotted or slashed words
// (obj.methodName): the runs of identifier bytes that isCodeIdent accepts.
// One pass finds a run's end, the classes it has and whether an upper-case
// letter follows a lower-case one (hump: icLower shifted onto icUpper); a
// run with an underscore is judged again (identWithUnderscore).
func (ex *extractor) ident(w string) {
	for len(w) > 0 {
		var all, hump, prev uint8
		k := 0
		for ; k < len(w); k++ {
			c := identClass[w[k]]
			if c == 0 {
				break
			}
			all |= c
			hump |= c & (prev >> 1)
			prev = c
		}
		if k >= 5 && w[0]-'0' > 9 {
			if all&icUnder == 0 && hump&icUpper != 0 || all&icUnder != 0 && identWithUnderscore(w[:k], hump&icUpper != 0) {
				ex.add(FactIdent, w[:k])
			}
		}
		if k == len(w) {
			break
		}
		w = w[k+1:]
	}
}

// identWithUnderscore judges a run of identifier bytes with an underscore:
// one between two other bytes and three letters make it an identifier;
// else a hump does.
func identWithUnderscore(run string, hump bool) bool {
	inner := strings.Trim(run, "_")
	if strings.IndexByte(inner, '_') < 0 {
		return hump
	}
	letters := 0
	for i := 0; i < len(inner); i++ {
		if identClass[inner[i]]&(icUpper|icLower) != 0 {
			letters++
		}
	}
	return letters >= 3
}

// identClass classifies the bytes of identifiers (isIdent): an
// underscore, an upper- or lower-case ASCII letter, or a digit; 0 for any
// other byte.
const (
	icUnder = 1 << iota
	icUpper
	icLower
	icDigit
)

var identClass = func() (t [256]uint8) {
	t['_'] = icUnder
	for c := 'A'; c <= 'Z'; c++ {
		t[c] = icUpper
		t[c+'a'-'A'] = icLower
	}
	for c := '0'; c <= '9'; c++ {
		t[c] = icDigit
	}
	return t
}()

// stripLineSuffix drops a ":line" or ":line:col" position (auth.go:42,
// src/main.rs:4:5), as compilers and test runners print it.
func stripLineSuffix(w string) string {
	for {
		i := strings.LastIndexByte(w, ':')
		if i <= 0 || i == len(w)-1 {
			return w
		}
		for _, c := range w[i+1:] {
			if c < '0' || c > '9' {
				return w
			}
		}
		w = w[:i]
	}
}

func isIdent(c byte) bool {
	return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

// isCodeIdent accepts camelCase/PascalCase (a lower-case letter followed by
// an upper-case one) and names with an inner underscore and three letters;
// it rejects plain words and numbers.
func isCodeIdent(s string) bool {
	if s[0] >= '0' && s[0] <= '9' {
		return false
	}
	inner := strings.Trim(s, "_")
	if strings.Contains(inner, "_") {
		letters := 0
		for i := 0; i < len(inner); i++ {
			if c := inner[i]; c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' {
				letters++
			}
		}
		return letters >= 3
	}
	humps := 0
	for i := 1; i < len(s); i++ {
		if s[i] >= 'A' && s[i] <= 'Z' && s[i-1] >= 'a' && s[i-1] <= 'z' {
			humps++
		}
	}
	return humps >= 1
}

// isCodeExt reports whether an extension makes a bare file name a path
// fact (codeExts; a switch, which needs no hashing).
func isCodeExt(e string) bool {
	switch e {
	case "go", "py", "ts", "tsx", "js", "jsx", "mjs", "rs", "java",
		"kt", "c", "h", "cc", "cpp", "hpp", "cs", "rb", "php",
		"swift", "ex", "exs", "erl", "scala", "lua", "sh", "bash",
		"zsh", "ps1", "sql", "md", "txt", "json", "jsonl", "yaml",
		"yml", "toml", "ini", "cfg", "conf", "xml", "html", "css",
		"scss", "vue", "svelte", "dart", "proto", "lock", "mod", "sum",
		"ipynb", "tf", "gradle", "env", "csv", "log", "zig", "nix":
		return true
	}
	return false
}

// isPath decides whether a word is a file path; shape has (at least) the
// classes of its bytes (wordClass).
func isPath(w string, shape uint16) bool {
	if len(w) >= 3 && w[1] == ':' && (w[2] == '\\' || w[2] == '/') && (w[0]|0x20 >= 'a' && w[0]|0x20 <= 'z') {
		return len(w) > 3
	}
	slash := -1
	if shape&classSlash != 0 {
		slash = strings.LastIndexByte(w, '/')
		if shape&classBack != 0 {
			if b := strings.LastIndexByte(w, '\\'); b > slash {
				slash = b
			}
		}
	}
	if slash < 0 {
		dot := strings.LastIndexByte(w, '.')
		return dot >= 2 && isCodeExt(w[dot+1:]) && hasLetter(w[:dot])
	}
	if hasDoubleSlash(w) {
		return false
	}
	switch {
	case w[0] == '/', strings.HasPrefix(w, "~/"), strings.HasPrefix(w, "./"), strings.HasPrefix(w, "../"):
		return slash < len(w)-1 && hasLetter(w[1:])
	}
	last := w[slash+1:]
	dot := strings.LastIndexByte(last, '.')
	return slash > 0 && dot > 0 && dot < len(last)-1 && hasLetter(last[dot+1:]) && hasLetter(w[:slash])
}

// hasDoubleSlash is strings.Contains(w, "//"), looking from the first
// slash.
func hasDoubleSlash(w string) bool {
	i := strings.IndexByte(w, '/')
	if i < 0 {
		return false
	}
	for i++; i < len(w); i++ {
		if w[i] == '/' && w[i-1] == '/' {
			return true
		}
	}
	return false
}

func hasLetter(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i] | 0x20; c >= 'a' && c <= 'z' {
			return true
		}
	}
	return false
}

func firstLine(s string) string {
	s = strings.TrimLeft(s, " \t\r\n")
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	return strings.TrimSpace(s)
}

// clip cuts s to at most n bytes at a rune boundary.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && s[n]&0xC0 == 0x80 {
		n--
	}
	return s[:n]
}
