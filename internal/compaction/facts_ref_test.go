package compaction

import (
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/compactbench/compactbench/internal/transcript"
)

// The extractor as it was before its scans were sped up, kept as the
// reference the fast one must match fact for fact and line for line.

// refExtractor finds facts; it reuses its scratch maps between messages.
type refExtractor struct {
	// seen dedupes facts within a message: a fact is seen when its stamp
	// equals gen (no clearing between messages).
	seen map[Fact]uint32
	gen  uint32
	out  []Fact
	// lineFn, when set, receives every line that can be a line fact
	// (commands, error-looking lines), for the occurrence index.
	lineFn func(string)
	// emit, when set, receives every fact found (repeats included) instead
	// of the deduplicated out list.
	emit func(Fact)
}

func (ex *refExtractor) add(k FactKind, s string) {
	f := Fact{k, s}
	if ex.emit != nil {
		ex.emit(f)
		return
	}
	if ex.seen[f] != ex.gen {
		ex.seen[f] = ex.gen
		ex.out = append(ex.out, f)
	}
}

func (ex *refExtractor) message(m *transcript.Message) []Fact {
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
				if ex.lineFn != nil {
					ex.lineFn(c)
				}
			}
		case transcript.BlockToolResult:
			ex.words(b.Text)
			ex.errorLines(b.Text, b.IsError, 5)
		default:
			ex.words(b.Text)
			if ex.lineFn != nil {
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
// lineFn. It searches the text for error words (refErrorAt) and looks only at
// the lines that have one: a line's trimming removes no letter, so it looks
// like an error exactly when it holds an error word.
func (ex *refExtractor) errorLines(text string, failed bool, limit int) {
	if failed {
		if l := strings.TrimSpace(firstLine(text)); len(l) >= 8 && len(l) <= 300 {
			ex.add(FactError, l)
		}
	}
	n := 0
	for len(text) > 0 && (n < limit || ex.lineFn != nil) {
		at := refErrorAt(text)
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
		if ex.lineFn != nil {
			ex.lineFn(line)
		}
		if n < limit {
			ex.add(FactError, line)
			n++
		}
	}
}

// refErrorAt is the index of the first error word in s (error, exception,
// traceback, panic, fatal, fail, ignoring ASCII case), or -1.
func refErrorAt(s string) int {
	for i := 0; i+4 <= len(s); i++ {
		if !errorLead[s[i]] {
			continue
		}
		w := s[i:]
		switch s[i] | 0x20 {
		case 'e':
			if hasFold(w, "error") || hasFold(w, "exception") {
				return i
			}
		case 't':
			if hasFold(w, "traceback") {
				return i
			}
		case 'p':
			if hasFold(w, "panic") {
				return i
			}
		case 'f':
			if hasFold(w, "fatal") || hasFold(w, "fail") {
				return i
			}
		}
	}
	return -1
}

// constraints adds the sentences of a prompt that set a rule.
func (ex *refExtractor) constraints(text string) {
	for _, s := range sentences(text) {
		lower := strings.ToLower(s) + " "
		for _, cue := range constraintCues {
			if strings.HasPrefix(lower, cue) || strings.Contains(lower, " "+cue) {
				ex.add(FactConstraint, clip(s, 200))
				break
			}
		}
	}
}

// words scans text for path, identifier and URL words.
func (ex *refExtractor) words(text string) {
	for i := 0; i < len(text); {
		for i < len(text) && wordClass[text[i]]&classSep != 0 {
			i++
		}
		j := i
		// Only words with a slash, backslash, dot or colon (paths, URLs,
		// dotted or positioned names) or an underscore or an upper-case
		// letter after a lower-case one (identifiers) can be facts.
		var seen, prev uint16
		for j < len(text) {
			c := wordClass[text[j]]
			if c&classSep != 0 {
				break
			}
			seen |= c
			if c&classUpper != 0 && prev&classLower != 0 {
				seen |= classIdent
			}
			prev = c
			j++
		}
		pathy, identy := seen&classPath != 0, seen&classIdent != 0
		// A JSON key ("file_path": ...) is structure, not a fact.
		key := j+1 < len(text) && text[j] == '"' && text[j+1] == ':'
		if (pathy || identy) && !key && j-i >= 3 {
			if pathy {
				if identy || !plainWord(text[i:j]) {
					ex.word(text[i:j])
				}
			} else {
				ex.ident(text[i:j])
			}
		}
		i = j
	}
}

func (ex *refExtractor) word(w string) {
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
	w = stripLineSuffix(w)
	if k := strings.Index(w, "::"); k > 0 { // tests/a.py::test_x, pkg::mod::f
		ex.word(w[:k])
		ex.word(w[k+2:])
		return
	}
	if refIsPath(w) {
		ex.add(FactPath, w)
		return
	}
	ex.ident(w)
}

// ident adds the identifiers of a word, also inside dotted or slashed words
// (obj.methodName).
func (ex *refExtractor) ident(w string) {
	for len(w) > 0 {
		k := 0
		for k < len(w) && isIdent(w[k]) {
			k++
		}
		if k >= 5 && isCodeIdent(w[:k]) {
			ex.add(FactIdent, w[:k])
		}
		if k == len(w) {
			break
		}
		w = w[k+1:]
	}
}

// extractionOf is what an extractor reports on a message: its facts and the
// lines it passes on for the occurrence index.
type extractionOf struct {
	facts []Fact
	lines []string
}

func refExtraction(m *transcript.Message) extractionOf {
	var out extractionOf
	ex := refExtractor{lineFn: func(l string) { out.lines = append(out.lines, l) }}
	out.facts = ex.message(m)
	return out
}

func fastExtraction(m *transcript.Message) extractionOf {
	var out extractionOf
	ex := extractor{lineFn: func(l string) { out.lines = append(out.lines, l) }}
	out.facts = ex.message(m)
	return out
}

func sameExtraction(a, b extractionOf) bool {
	if len(a.facts) != len(b.facts) || len(a.lines) != len(b.lines) {
		return false
	}
	for i := range a.facts {
		if a.facts[i] != b.facts[i] {
			return false
		}
	}
	for i := range a.lines {
		if a.lines[i] != b.lines[i] {
			return false
		}
	}
	return true
}

// textMessages wraps a text as the message kinds the extractor treats
// differently: a prompt, an assistant text, a tool call and a failed tool
// result.
func textMessages(text string) []transcript.Message {
	return []transcript.Message{
		{Role: transcript.RoleUser, Blocks: []transcript.Block{{Kind: transcript.BlockText, Text: text}}},
		{Role: transcript.RoleAssistant, Blocks: []transcript.Block{{Kind: transcript.BlockThinking, Text: text}}},
		{Role: transcript.RoleAssistant, Blocks: []transcript.Block{{Kind: transcript.BlockToolUse, Input: text, Command: text}}},
		{Role: transcript.RoleUser, Blocks: []transcript.Block{{Kind: transcript.BlockToolResult, Text: text, IsError: true}}},
	}
}

// TestExtractorMatchesReference checks the extractor against the reference
// on texts that sit on the edges of its word and error-word scans, and on
// every message of the real corpus when it is present.
func TestExtractorMatchesReference(t *testing.T) {
	texts := []string{"", "a", "ab_c", "aB", "xyzAbc", "error", "ERRO", "fail", "xfail", "err\nor",
		"see src/main.go:42 and parseConfig, then https://x.io/a?b.", "TypeError: x\n\tat foo.bar(baz.js:1:2)",
		"get_user MAX_RETRIES __init__ obj.methodName a::b::cCc", "\"file_path\": \"/a/b.go\"",
		"12345678ExceptionXYZtraceback panic fatal FAIL pAnIc", strings.Repeat("abcdefgh", 9) + "Error",
		"é/ü.go naïveCase caféBar", "C:\\x\\y.txt ~/a ./b ../c.rs", "x\x00y_z\xff\x80/q.go",
		"DON'T touch İt. NEVER use the \u212aelvin sign. Only THIS. make  sure x", "ma\u212ae sure it works. \u0130nstead of this: AVOID",
		"I'LL USE Go. We decided TO go. İ'll use x. instead OF"}
	for _, text := range texts {
		for _, m := range textMessages(text) {
			if got, want := fastExtraction(&m), refExtraction(&m); !sameExtraction(got, want) {
				t.Errorf("%q (%s %s): got %v, want %v", text, m.Role, m.Blocks[0].Kind, got, want)
			}
		}
	}
	t.Run("real corpus", func(t *testing.T) {
		n := 0
		for _, tr := range realTranscripts(t, false) {
			for i := range tr.Messages {
				m := &tr.Messages[i]
				if got, want := fastExtraction(m), refExtraction(m); !sameExtraction(got, want) {
					t.Fatalf("%s message %d: extraction differs from the reference", tr.Path, i)
				}
				n++
			}
		}
		t.Logf("%d messages of the real corpus match", n)
	})
}

// FuzzExtractorMatchesReference checks the extractor against the reference
// on any text.
func FuzzExtractorMatchesReference(f *testing.F) {
	for _, s := range []string{"src/a.go parseConfig", "Error: x\nfail", "aB_c:1 https://u.rl", "TRACEBACK\n\tpanic"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		for _, m := range textMessages(text) {
			if got, want := fastExtraction(&m), refExtraction(&m); !sameExtraction(got, want) {
				t.Fatalf("%q (%s %s): got %v, want %v", text, m.Role, m.Blocks[0].Kind, got, want)
			}
		}
	})
}

// TestSpanCuesMatchToLower checks the span's cue lookups (constraints of a
// prompt, decisions of the assistant) against strings.ToLower, on texts
// with capitals and with the two runes ToLower turns into ASCII letters.
func TestSpanCuesMatchToLower(t *testing.T) {
	for _, text := range []string{"DON'T touch İt. NEVER use the \u212aelvin sign. Only THIS. make  sure x",
		"ma\u212ae sure it works. \u0130nstead of this: AVOID it", "I'LL USE Go. We decided TO go. İ'll use x. I\u0130ll use y.",
		"plain text without cues. Instead of a, b.", "ÀÉÎ always Ü. \xff\xfe must do"} {
		var want []string
		for _, s := range sentences(text) {
			lower := " " + strings.ToLower(s) + " "
			for _, cue := range constraintCues {
				if strings.Contains(lower, " "+cue) {
					want = append(want, "constraint:"+clip(s, 200))
					break
				}
			}
		}
		for _, s := range sentences(strings.TrimSpace(text)) {
			lower := strings.ToLower(s)
			for _, cue := range decisionCues {
				if strings.Contains(lower, cue) {
					want = append(want, "decision:"+clip(s, 200))
					break
				}
			}
		}
		var sp span
		sp.addPrompt(text)
		sp.addSay(text)
		var got []string
		for _, c := range sp.constraints {
			got = append(got, "constraint:"+c)
		}
		for _, d := range sp.decisions.list {
			got = append(got, "decision:"+d)
		}
		if strings.Join(got, "|") != strings.Join(want, "|") {
			t.Errorf("%q: got %q, want %q", text, got, want)
		}
	}
}

// refIndexFacts builds a fact index as it was built before the indexer
// memoized words: the reference extractor's facts, one map lookup each.
func refIndexFacts(t *transcript.Transcript) *FactIndex {
	ix := &FactIndex{perMsg: make([][]int32, len(t.Messages))}
	lines := map[string][]int32{}
	for k := range ix.ids {
		ix.ids[k] = map[string]int32{}
	}
	var mi int32
	var last, per []int32
	start := make([]int, len(t.Messages)+1)
	ex := refExtractor{lineFn: func(l string) { lines[l] = appendOnce(lines[l], mi) }}
	ex.emit = func(f Fact) {
		id, ok := ix.ids[f.Kind][f.Text]
		if !ok {
			id = int32(len(ix.facts))
			ix.ids[f.Kind][f.Text] = id
			ix.facts = append(ix.facts, f)
			last = append(last, -1)
		}
		if last[id] != mi {
			last[id] = mi
			per = append(per, id)
		}
	}
	for i := range t.Messages {
		mi = int32(i)
		ex.message(&t.Messages[i])
		start[i+1] = len(per)
	}
	for i := range t.Messages {
		if start[i] < start[i+1] {
			ix.perMsg[i] = per[start[i]:start[i+1]:start[i+1]]
		}
	}
	ix.lines = map[string]int32{}
	for l, occ := range lines {
		ix.lines[l] = int32(len(ix.lineOcc))
		ix.lineOcc = append(ix.lineOcc, occ)
	}
	n := len(ix.facts)
	ix.occ = occurrences(per, start, n, n)
	ix.base = make([]int32, n)
	for id := range n {
		f := ix.facts[id]
		if f.Kind.isLine() {
			ix.occ[id] = lines[f.Text]
		}
		ix.base[id] = ix.baseOf(f)
	}
	return ix
}

func appendOnce(s []int32, i int32) []int32 {
	if n := len(s); n > 0 && s[n-1] == i {
		return s
	}
	return append(s, i)
}

// lineMap is an index's lines and the messages that have each.
func lineMap(ix *FactIndex) map[string][]int32 {
	m := map[string][]int32{}
	for l, n := range ix.lines {
		m[l] = ix.lineOcc[n]
	}
	return m
}

// sameIndex reports where two fact indexes differ, or "".
func sameIndex(got, want *FactIndex) string {
	switch {
	case !slices.Equal(got.facts, want.facts):
		return "facts"
	case !slices.Equal(got.base, want.base):
		return "base"
	case !slices.EqualFunc(got.perMsg, want.perMsg, slices.Equal):
		return "perMsg"
	case !slices.EqualFunc(got.occ, want.occ, slices.Equal):
		return "occ"
	case !maps.EqualFunc(lineMap(got), lineMap(want), slices.Equal):
		return "lines"
	}
	for k := range got.ids {
		if !maps.Equal(got.ids[k], want.ids[k]) {
			return "ids"
		}
	}
	return ""
}

// TestIndexFactsMatchesReference checks the whole index (ids, per-message
// facts, occurrences, file names, lines) against one built from the
// reference extractor, on transcripts that repeat words across messages
// and kinds, and on every transcript of the real corpus when present.
func TestIndexFactsMatchesReference(t *testing.T) {
	var msgs []transcript.Message
	for _, text := range []string{"see src/main.go:42 and parseConfig", "\"file_path\": \"/a/b.go\" src/main.go",
		"parseConfig obj.parseConfig src/main.go:7 tests/a.py::test_x", "Error: src/main.go failed\nparseConfig",
		"https://x.io/a?b. https://x.io/a?b", "get_user get_user.go ./b ./b", "Error: twice here\nError: twice here\n  Error: twice here"} {
		msgs = append(msgs, textMessages(text)...)
	}
	tr := &transcript.Transcript{Messages: msgs}
	if d := sameIndex(IndexFacts(tr), refIndexFacts(tr)); d != "" {
		t.Errorf("small transcript: %s differ", d)
	}
	t.Run("real corpus", func(t *testing.T) {
		for _, tr := range realTranscripts(t, false) {
			if d := sameIndex(IndexFacts(tr), refIndexFacts(tr)); d != "" {
				t.Fatalf("%s: %s differ from the reference index", tr.Path, d)
			}
		}
	})
}

// codeExts are the extensions that make a bare file name a path fact, as
// the reference looks them up.
var codeExts = map[string]bool{
	"go": true, "py": true, "ts": true, "tsx": true, "js": true, "jsx": true, "mjs": true, "rs": true, "java": true,
	"kt": true, "c": true, "h": true, "cc": true, "cpp": true, "hpp": true, "cs": true, "rb": true, "php": true,
	"swift": true, "ex": true, "exs": true, "erl": true, "scala": true, "lua": true, "sh": true, "bash": true,
	"zsh": true, "ps1": true, "sql": true, "md": true, "txt": true, "json": true, "jsonl": true, "yaml": true,
	"yml": true, "toml": true, "ini": true, "cfg": true, "conf": true, "xml": true, "html": true, "css": true,
	"scss": true, "vue": true, "svelte": true, "dart": true, "proto": true, "lock": true, "mod": true, "sum": true,
	"ipynb": true, "tf": true, "gradle": true, "env": true, "csv": true, "log": true, "zig": true, "nix": true,
}

// refIsPath decides whether a word is a file path, as before words passed
// their shape on.
func refIsPath(w string) bool {
	if len(w) >= 3 && w[1] == ':' && (w[2] == '\\' || w[2] == '/') && (w[0]|0x20 >= 'a' && w[0]|0x20 <= 'z') {
		return len(w) > 3
	}
	slash := strings.LastIndexByte(w, '/')
	if b := strings.LastIndexByte(w, '\\'); b > slash {
		slash = b
	}
	if slash < 0 {
		dot := strings.LastIndexByte(w, '.')
		return dot >= 2 && codeExts[w[dot+1:]] && hasLetter(w[:dot])
	}
	if strings.Contains(w, "//") {
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

// TestCodeExts checks the extension switch against the reference's map.
func TestCodeExts(t *testing.T) {
	n := 0
	for e := range codeExts {
		if !isCodeExt(e) {
			t.Errorf("isCodeExt(%q) = false", e)
		}
		n++
	}
	for _, e := range []string{"", "g", "goo", "GO", "Go", "pyc", "jsonl2", "yml ", "method", "0"} {
		if isCodeExt(e) {
			t.Errorf("isCodeExt(%q) = true", e)
		}
	}
	if n != 58 {
		t.Errorf("%d extensions, want 58", n)
	}
}

// FuzzIndexFactsMatchesReference checks the whole index against the
// reference on transcripts made of any text: each part of the text between
// two form feeds becomes the four message kinds of textMessages, so facts
// and lines recur across messages and kinds.
func FuzzIndexFactsMatchesReference(f *testing.F) {
	for _, s := range []string{"src/a.go parseConfig\fsrc/a.go Error: x\nfail", "Error: boom\f  Error: boom  \fnpm test", "Error: again\nError: again",
		"a/b.c\\d e_f::gHi\fhttps://x.io/a. a/b.c"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		var msgs []transcript.Message
		for _, part := range strings.Split(text, "\f") {
			msgs = append(msgs, textMessages(part)...)
		}
		tr := &transcript.Transcript{Messages: msgs}
		if d := sameIndex(IndexFacts(tr), refIndexFacts(tr)); d != "" {
			t.Fatalf("%q: %s differ from the reference index", text, d)
		}
	})
}

// refHasWordCue is hasWordCue as it was: the text lower-cased by
// strings.ToLower, then a search per cue, at the start or after a space.
func refHasWordCue(pre, s, post string) bool {
	l := pre + strings.ToLower(s) + post
	for _, cue := range constraintCues {
		if strings.HasPrefix(l, cue) || strings.Contains(l, " "+cue) {
			return true
		}
	}
	return false
}

// cueCases are texts for hasWordCue: cues at the start, after a space, glued
// to a word, at the end (where post supplies their space), in capitals, and
// with the two runes ToLower turns into ASCII letters.
var cueCases = []string{
	"", "don't", "Don't touch it", "xdon't touch", "please never", "NEVER", " never", "nevermore",
	"you MUST run", "mustard", "make  sure", "make sure", "ma\u212ae sure it works", "\u0130nstead of this",
	"only", "onlyuse", "it should not", "shouldn't", "with out", "without", "\talways", "a\u00a0always",
	"avoid", "do not", "do  not", "dont", "ÀÉÎ always Ü", "\xff\xfe must do", "do", "d", "  ",
}

func TestHasWordCueMatchesReference(t *testing.T) {
	var c cueText
	for _, s := range cueCases {
		for _, pp := range [][2]string{{"", " "}, {" ", " "}, {"", ""}} {
			if got, want := c.hasWordCue(pp[0], s, pp[1]), refHasWordCue(pp[0], s, pp[1]); got != want {
				t.Errorf("hasWordCue(%q, %q, %q) = %v, want %v", pp[0], s, pp[1], got, want)
			}
		}
	}
}

func FuzzHasWordCue(f *testing.F) {
	for _, s := range cueCases {
		f.Add(s)
	}
	var c cueText
	f.Fuzz(func(t *testing.T, s string) {
		for _, pp := range [][2]string{{"", " "}, {" ", " "}, {"", ""}} {
			if got, want := c.hasWordCue(pp[0], s, pp[1]), refHasWordCue(pp[0], s, pp[1]); got != want {
				t.Fatalf("hasWordCue(%q, %q, %q) = %v, want %v", pp[0], s, pp[1], got, want)
			}
		}
	})
}

// TestDropExtractedMatchesFreshExtractor checks dropExtracted (one
// extractor kept by the scratch, facts handed straight to drop) against
// what dropFactsOf did before: a fresh extractor per message, its
// deduplicated list interned and dropped in order. Messages are dropped in
// groups, as compactions do, so a fact repeated across a group's messages
// and the stamps between groups count.
func TestDropExtractedMatchesFreshExtractor(t *testing.T) {
	check := func(t *testing.T, tr *transcript.Transcript) {
		t.Helper()
		// The index holds the first half's facts: the second half's new
		// facts are interned as they are dropped.
		half := &transcript.Transcript{Messages: tr.Messages[:len(tr.Messages)/2]}
		got, want := IndexFacts(half), IndexFacts(half)
		var sc, ref measureScratch
		for start := 0; start < len(tr.Messages); start += 7 {
			sc.stamp++
			ref.stamp++
			sc.dropped, ref.dropped = sc.dropped[:0], ref.dropped[:0]
			for i := start; i < min(start+7, len(tr.Messages)); i++ {
				m := &tr.Messages[i]
				sc.dropExtracted(got, m)
				var ex extractor
				for _, f := range ex.message(m) {
					ref.drop(want.intern(f))
				}
			}
			if !slices.Equal(sc.dropped, ref.dropped) {
				t.Fatalf("%s: messages %d…: dropped %v, want %v", tr.Path, start, sc.dropped, ref.dropped)
			}
		}
		if d := sameIndex(got, want); d != "" {
			t.Fatalf("%s: after the drops, %s differ", tr.Path, d)
		}
	}
	var msgs []transcript.Message
	for _, text := range []string{"see src/main.go:42 and parseConfig", "parseConfig src/new.go never use eval.",
		"Error: src/main.go failed\nparseConfig", "https://x.io/a?b. https://x.io/a?b", "get_user get_user.go ./b ./b"} {
		msgs = append(msgs, textMessages(text)...)
	}
	check(t, &transcript.Transcript{Path: "small", Messages: msgs})
	t.Run("real corpus", func(t *testing.T) {
		for _, tr := range realTranscripts(t, false) {
			check(t, tr)
		}
	})
}

// TestMarkWrittenMatchesFreshExtractor checks markWritten (the scratch's
// extractor, every fact found marked) against what inWritten did before: a
// fresh extractor's deduplicated list, each indexed fact marked.
func TestMarkWrittenMatchesFreshExtractor(t *testing.T) {
	check := func(t *testing.T, tr *transcript.Transcript) {
		t.Helper()
		ix := IndexFacts(&transcript.Transcript{Messages: tr.Messages[:len(tr.Messages)/2]})
		var sc measureScratch
		ref := make([]uint32, len(ix.facts))
		for i := range tr.Messages {
			var b strings.Builder
			writeText(&b, &tr.Messages[i])
			text := b.String()
			sc.stamp++
			sc.written = make([]uint32, len(ix.facts))
			sc.markWritten(ix, text)
			clear(ref)
			var wx extractor
			for _, wf := range wx.message(&transcript.Message{Blocks: []transcript.Block{{Kind: transcript.BlockText, Text: text}}}) {
				if wid, ok := ix.ids[wf.Kind][wf.Text]; ok {
					ref[wid] = sc.stamp
				}
			}
			if !slices.Equal(sc.written, ref) {
				t.Fatalf("%s: message %d: marks differ", tr.Path, i)
			}
		}
	}
	check(t, &transcript.Transcript{Path: "small", Messages: textMessages("see src/main.go:42 and parseConfig\nparseConfig src/new.go")})
	t.Run("real corpus", func(t *testing.T) {
		for _, tr := range realTranscripts(t, false) {
			check(t, tr)
		}
	})
}

// TestTextLenIsWrittenLength checks that textLen, which sizes the written
// text, is the length writeText writes, placeholders left out.
func TestTextLenIsWrittenLength(t *testing.T) {
	check := func(t *testing.T, m *transcript.Message) {
		t.Helper()
		var b strings.Builder
		writeText(&b, m)
		if n := textLen(m); n != b.Len() {
			t.Fatalf("textLen = %d, writeText wrote %d bytes", n, b.Len())
		}
	}
	check(t, &transcript.Message{Blocks: []transcript.Block{{Kind: transcript.BlockText, Text: "héllo"},
		{Kind: transcript.BlockToolUse, Input: `{"command":"ls"}`, Command: "ls"},
		{Kind: transcript.BlockToolResult, Text: "[masked]", InjectedKind: placeholderMasked},
		{Kind: transcript.BlockToolResult, Text: "out"}, {Kind: transcript.BlockImage}}})
	t.Run("real corpus", func(t *testing.T) {
		for _, tr := range realTranscripts(t, false) {
			for i := range tr.Messages {
				check(t, &tr.Messages[i])
			}
		}
	})
}
