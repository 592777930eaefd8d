package compaction

import (
	"bytes"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/compactbench/compactbench/internal/transcript"
)

// Event is one compaction a strategy performed, with its metrics.
type Event struct {
	Strategy string
	// Round counts the strategy's compactions in this transcript, from 1.
	Round int
	// Call is the index of the API call the compaction happened before
	// (len(Calls) for a compaction after the last call, as in ModeOnce).
	Call int
	// Turn is the turn of the last recorded message before the compaction.
	Turn int
	// Action says what was done: compact (summary), prune, mask, truncate,
	// recorded, microcompact.
	Action       string
	TokensBefore int
	TokensAfter  int
	// CompressionRatio is (before − after) / before; LowCompression is
	// ratio < 0.60 (BR-005).
	CompressionRatio float64
	LowCompression   bool
	// Anchor* describe anchor-based selections (codelet, fspec); empty
	// for strategies that use no anchors.
	AnchorKind string // natural | synthetic | none
	AnchorType string
	AnchorRule string
	AnchorUsed bool // the selection kept from an anchor
	// KeptTurns are turns of the context before the compaction that still
	// have a message after it; SummarizedTurns those that have none.
	KeptTurns       int
	SummarizedTurns int
	SummaryTokens   int
	OrphanResults   int
	DanglingCalls   int
	// NeedFacts are the facts dropped that the session used again later;
	// NeedKept those the compacted context still holds.
	NeedFacts int
	NeedKept  int
	// NeedDetail breaks NeedKept/NeedFacts down by kind: "path=1/2;error=0/1".
	NeedDetail  string
	FileRecall  *float64
	ErrorRecall *float64
	IntentKept  *bool
	// Timestamp is the recording's timestamp of the last message before
	// the compaction.
	Timestamp string
	// TriggerReason says why it happened: the trigger's measure and limit
	// ("prompt 181000, limit 180000"), or the recorded boundary's trigger.
	TriggerReason string
	// KeptEverything: every recorded message of the context before is
	// still there as it was; only text the strategy wrote earlier was
	// replaced (a selection that found nothing old enough to drop).
	KeptEverything bool
	// DroppedTokens are the metric tokens of the messages the compaction
	// removed or changed (what the summary or placeholders replace).
	DroppedTokens int
	// TriggerTokens is the strategy's own measure when it decided to
	// compact (its ruler, its definition: codelet's effective tokens).
	TriggerTokens int
	// PreTokens is the harness's own count for recorded compactions.
	PreTokens int64
	// SummarizerInput is what a summarizer model would have read (metric
	// tokens), for the cost model; 0 when nothing was summarized.
	SummarizerInput int
	// Summary describes who wrote the summary (its texts are empty): Source
	// is "" when the compaction wrote none.
	Summary Summary
	// ExtractiveTokens is the extractive summary's size (metric ruler) when
	// a model summarizer wrote the summary, for comparison; else 0.
	ExtractiveTokens int
}

// NeedRecall is NeedKept / NeedFacts, or nil without facts.
func (e *Event) NeedRecall() *float64 { return ratio(e.NeedKept, e.NeedFacts) }

func ratio(num, den int) *float64 {
	if den == 0 {
		return nil
	}
	v := float64(num) / float64(den)
	return &v
}

// measureScratch is measure's reusable state: stamped slices instead of
// maps, reset by bumping the stamp.
type measureScratch struct {
	stamp uint32
	// verbatim, at and unchanged are the marks of the context after,
	// valid when they hold inc.mark: they persist between measures, which
	// update them by what changed (incState, shift).
	verbatim []uint32 // by recorded message
	// at is, by recorded message, whether it is present (stamp) and at
	// which position of the context: one load for pairs' lookups.
	at         []stampedPos
	turnBefore []uint32 // by turn
	unchanged  []uint32 // by item id (written and modified items)
	// sameTools caches sameTools per modified item id (items never change
	// once made): 0 not known yet, 1 same, 2 changed.
	sameTools     []uint8
	fact, written []uint32 // by fact id: dropped, held by written text
	dropped       []int32  // ids of the dropped facts
	// file marks, by fact id, the changed files of dropped tool calls;
	// files lists their ids.
	file  []uint32
	files []int32
	open  map[string]bool
	inc   incState
	// dropEx extracts the facts of dropped written or modified messages
	// into dropped, interning them in dropIx (dropExtracted); writtenEx
	// marks the facts of written text in written (markWritten).
	dropEx, writtenEx extractor
	dropIx            *FactIndex
}

// stampedPos is a position in the context, valid when stamp is the
// scratch's current mark (incState.mark).
type stampedPos struct {
	stamp uint32
	pos   int32
}

// setAt marks recorded message o present at context position i.
func (sc *measureScratch) setAt(o, i int) { sc.at[o] = stampedPos{sc.inc.mark, int32(i)} }

func (s *Sim) scratch(nmsgs, nturns int) *measureScratch {
	sc := &s.sc
	if len(sc.verbatim) != nmsgs {
		sc.verbatim, sc.at = make([]uint32, nmsgs), make([]stampedPos, nmsgs)
		sc.turnBefore = make([]uint32, nturns)
		sc.open = map[string]bool{}
		sc.inc = incState{mark: 1, turnCount: make([]int32, nturns), taStamp: make([]uint32, nturns),
			taCount: make([]int32, nturns), taSeen: make([]uint32, nturns), seen: make([]uint32, nmsgs)}
	}
	if need := s.nextID + 1; len(sc.unchanged) < need {
		sc.unchanged = append(sc.unchanged, make([]uint32, need-len(sc.unchanged)+64)...)
	}
	if need := s.nextID + 1; len(sc.sameTools) < need {
		sc.sameTools = append(sc.sameTools, make([]uint8, need-len(sc.sameTools)+64)...)
	}
	sc.stamp++
	return sc
}

// toolPartner is a tool block of a recorded message and the message that
// holds the other half of its pair.
type toolPartner struct {
	id      string
	result  bool
	partner int // message index, -1 when the recording has none
}

// toolPartners pairs the recording's tool blocks, once per transcript, in
// order: a result pairs with the most recent unanswered call of its id (some
// recordings reuse ids: a SWE-agent demonstration repeats one call id).
func toolPartners(msgs []transcript.Message) [][]toolPartner {
	// Every message's list is cut from one array. open maps a tool id to
	// its most recent unanswered call (an index into flat); below links
	// each call to the unanswered call of the same id before it, so that
	// reused ids pair last in, first out.
	n := 0
	for i := range msgs {
		for j := range msgs[i].Blocks {
			if k := msgs[i].Blocks[j].Kind; k == transcript.BlockToolUse || k == transcript.BlockToolResult {
				n++
			}
		}
	}
	out := make([][]toolPartner, len(msgs))
	if n == 0 {
		return out
	}
	flat := make([]toolPartner, 0, n)
	msgOf, below := make([]int32, n), make([]int32, n)
	open := make(map[string]int32, n/2+1)
	for i := range msgs {
		first := len(flat)
		for j := range msgs[i].Blocks {
			b := &msgs[i].Blocks[j]
			switch b.Kind {
			case transcript.BlockToolUse:
				k := int32(len(flat))
				msgOf[k], below[k] = int32(i), -1
				if top, ok := open[b.ToolID]; ok {
					below[k] = top
				}
				open[b.ToolID] = k
				flat = append(flat, toolPartner{id: b.ToolID, partner: -1})
			case transcript.BlockToolResult:
				tp := toolPartner{id: b.ToolID, result: true, partner: -1}
				if c, ok := open[b.ToolID]; ok {
					if below[c] >= 0 {
						open[b.ToolID] = below[c]
					} else {
						delete(open, b.ToolID)
					}
					tp.partner = int(msgOf[c])
					flat[c].partner = i
				}
				flat = append(flat, tp)
			}
		}
		if first < len(flat) {
			out[i] = flat[first:len(flat):len(flat)]
		}
	}
	return out
}

// sameTools reports whether a (modified) item still has its recorded
// message's tool blocks, in order: masking and clearing keep them.
func sameTools(it *Item, want []toolPartner) bool {
	k := 0
	for i := range it.Msg.Blocks {
		b := &it.Msg.Blocks[i]
		if b.Kind != transcript.BlockToolUse && b.Kind != transcript.BlockToolResult {
			continue
		}
		if k >= len(want) || want[k].id != b.ToolID || want[k].result != (b.Kind == transcript.BlockToolResult) {
			return false
		}
		k++
	}
	return k == len(want)
}

// pairs counts orphan results and dangling calls in the context (measure
// has marked where each recorded message is, setAt), leaving out the pairs the recording itself
// lost. Recorded messages use the precomputed partners; a context holding
// written tool blocks is checked by id.
func (sc *measureScratch) pairs(sh *Shared, items []Item) (orphans, dangling int) {
	for i := range items {
		it := &items[i]
		if it.Orig < 0 || (it.Modified && !sc.keepsTools(it, sh.partners[it.Orig])) {
			if hasTools(it.Msg) {
				return sc.pairsByID(items, sh.Lost)
			}
		}
	}
	for i := range items {
		it := &items[i]
		if it.Orig < 0 {
			continue
		}
		for _, tp := range sh.partners[it.Orig] {
			// A pair inside one message (Codex records some results in
			// the assistant message that made the call) is valid while
			// the item keeps both blocks, which sameTools checked.
			ok := tp.partner == it.Orig
			if !ok && tp.partner >= 0 {
				at := sc.at[tp.partner]
				ok = at.stamp == sc.inc.mark && (tp.result && int(at.pos) < i || !tp.result && int(at.pos) > i)
			}
			if ok || sh.Lost[tp.id] {
				continue
			}
			if tp.result {
				orphans++
			} else {
				dangling++
			}
		}
	}
	return orphans, dangling
}

// keepsTools is sameTools, remembered per item id.
func (sc *measureScratch) keepsTools(it *Item, want []toolPartner) bool {
	if it.id <= 0 || it.id >= len(sc.sameTools) {
		return sameTools(it, want)
	}
	if sc.sameTools[it.id] == 0 {
		sc.sameTools[it.id] = 2 - b2u8(sameTools(it, want))
	}
	return sc.sameTools[it.id] == 1
}

func b2u8(b bool) uint8 {
	if b {
		return 1
	}
	return 0
}

func hasTools(m *transcript.Message) bool {
	for i := range m.Blocks {
		if b := &m.Blocks[i]; b.Kind == transcript.BlockToolUse || b.Kind == transcript.BlockToolResult {
			return true
		}
	}
	return false
}

// pairsByID counts orphans and dangling calls by tool id.
func (sc *measureScratch) pairsByID(items []Item, lost map[string]bool) (orphans, dangling int) {
	clear(sc.open)
	for i := range items {
		for j := range items[i].Msg.Blocks {
			switch b := &items[i].Msg.Blocks[j]; b.Kind {
			case transcript.BlockToolUse:
				sc.open[b.ToolID] = true
			case transcript.BlockToolResult:
				if sc.open[b.ToolID] {
					delete(sc.open, b.ToolID)
				} else if !lost[b.ToolID] {
					orphans++
				}
			}
		}
	}
	for id := range sc.open {
		if !lost[id] {
			dangling++
		}
	}
	return orphans, dangling
}

// measure fills an event's metrics from the contexts before (before, of
// beforeTok metric tokens) and after (s.Ctx), in named steps: sizes, the
// marks of the context after (updated from the last measure's by what
// changed, or made from scratch), one pass over the context before, or its
// part that changed (turns, dropped facts and tokens), tool pairs, then
// the recalls.
func measure(s *Sim, ev *Event, before []Item, beforeTok int, out *Outcome) {
	measureSplit(s, ev, before[:s.same], before[s.same:], beforeTok, out)
}

// measureSplit is measure with the context before given as its first s.same
// items (head, those the context after starts with) and the rest (tail), as
// replace leaves them.
func measureSplit(s *Sim, ev *Event, head, tail []Item, beforeTok int, out *Outcome) {
	measureSizes(s, ev, beforeTok, out)
	m := measurement{s: s, head: head, tail: tail, sc: s.scratch(len(s.T.Messages), len(s.Turns)), ix: s.Facts()}
	// Updating the marks pays when most of the context stayed (masking,
	// pruning); after a summary, marking from scratch is cheaper.
	if !fullMeasure && m.sc.inc.live && 2*s.same >= len(s.Ctx) && m.shift() {
		m.scanTail(ev)
	} else {
		m.markAfter()
		m.scanBefore(ev)
	}
	ev.OrphanResults, ev.DanglingCalls = m.pairsAfter()
	m.needRecall(ev)
	m.fileRecall(ev)
	m.intentKept(ev)
}

// measureSizes fills the token counts, compression and summary size.
func measureSizes(s *Sim, ev *Event, beforeTok int, out *Outcome) {
	ev.TokensBefore, ev.TokensAfter = beforeTok, s.Tokens()
	if beforeTok > 0 {
		ev.CompressionRatio = float64(beforeTok-ev.TokensAfter) / float64(beforeTok)
	}
	ev.LowCompression = ev.CompressionRatio < 0.60
	if out.Summary != "" {
		ev.SummaryTokens = s.Metric.Text(out.Summary)
	}
}

// measurement is one compaction being measured: the context before, the
// marks of the context after (s.Ctx) in the scratch, and the text the
// strategy wrote, built when first needed.
type measurement struct {
	s *Sim
	// head and tail are the context before: its first s.same items, which
	// the context after starts with, and the rest.
	head, tail []Item
	sc         *measureScratch
	ix         *FactIndex
	// text is what the strategy wrote or changed (textDone once built);
	// wordsDone is set once the word facts of text are marked in
	// sc.written.
	text                string
	textDone, wordsDone bool
	// gramsDone is set once s.grams holds text; scanned counts the bytes
	// line-fact searches scanned before.
	gramsDone bool
	scanned   int
}

// verbatim reports whether recorded message o is in the context after as
// it was recorded.
func (m *measurement) verbatim(o int) bool { return m.sc.verbatim[o] == m.sc.inc.mark }

// unchanged reports whether a written or modified item of the context
// before is still in the context after, as it was.
func (m *measurement) unchanged(it *Item) bool {
	return it.id > 0 && m.sc.unchanged[it.id] == m.sc.inc.mark
}

// markAfter marks, for the context after, which recorded messages are
// present (and where), which are verbatim, which written items are still
// there, and how many messages each turn still has, from scratch: the
// marks the next measure updates (shift).
func (m *measurement) markAfter() {
	s, sc := m.s, m.sc
	in := &sc.inc
	in.mark++
	clear(in.turnCount)
	in.turns, in.force, in.dup, in.pairsLive = 0, 0, false, false
	for i := range s.Ctx {
		sc.add(s, i)
	}
	in.live, in.marked = !in.dup, len(s.Ctx)
}

// scanBefore walks the context before once: it counts kept and summarized
// turns, collects the dropped facts and the changed files of dropped
// messages, and adds up the dropped tokens (KeptEverything, DroppedTokens).
func (m *measurement) scanBefore(ev *Event) {
	sc := m.sc
	sc.dropped, sc.files = sc.dropped[:0], sc.files[:0]
	ev.KeptEverything = true
	for _, part := range [2][]Item{m.head, m.tail} {
		for i := range part {
			it := &part[i]
			if it.Orig >= 0 {
				m.countTurn(ev, m.s.TurnOf[it.Orig])
			}
			m.scanItem(ev, it)
		}
	}
}

// nBefore is the length of the context before.
func (m *measurement) nBefore() int { return len(m.head) + len(m.tail) }

// beforeAt is item i of the context before.
func (m *measurement) beforeAt(i int) *Item {
	if i < len(m.head) {
		return &m.head[i]
	}
	return &m.tail[i-len(m.head)]
}

// scanItem adds an item of the context before to the dropped facts and
// tokens when the context after no longer has it as it was.
func (m *measurement) scanItem(ev *Event, it *Item) {
	m.dropFactsOf(it)
	if (it.Orig >= 0 && !it.Modified && m.verbatim(it.Orig)) || m.unchanged(it) {
		return
	}
	if it.Orig >= 0 {
		ev.KeptEverything = false
	}
	if it.Orig >= 0 && !it.Modified {
		ev.DroppedTokens += int(m.s.count(it.Orig).tok)
	} else {
		ev.DroppedTokens += m.s.Metric.Message(it.Msg)
	}
}

// countTurn counts a turn of the context before once: kept when the context
// after still has one of its messages, else summarized.
func (m *measurement) countTurn(ev *Event, t int) {
	sc := m.sc
	if sc.turnBefore[t] == sc.stamp {
		return
	}
	sc.turnBefore[t] = sc.stamp
	if sc.inc.turnCount[t] > 0 {
		ev.KeptTurns++
	} else {
		ev.SummarizedTurns++
	}
}

// dropFactsOf adds the facts of an item of the context before that the
// context after no longer has as it was: a recorded message no longer
// verbatim (its indexed facts, and the files its tool calls change), or a
// written or modified message that is gone or changed again (its facts
// extracted now). Facts are deduped by id.
func (m *measurement) dropFactsOf(it *Item) {
	ix := m.ix
	switch {
	case it.Orig >= 0 && m.verbatim(it.Orig):
	case it.Orig >= 0 && !it.Modified:
		for _, id := range ix.perMsg[it.Orig] {
			m.sc.drop(id)
		}
		for i := range it.Msg.Blocks {
			if b := &it.Msg.Blocks[i]; b.Kind == transcript.BlockToolUse && b.Path != "" && b.ToolKind() == transcript.ToolModify {
				m.sc.changedFile(ix.intern(Fact{FactPath, b.Path}))
			}
		}
	case m.unchanged(it): // a written or modified message still there as it was
	default:
		m.sc.dropExtracted(ix, it.Msg)
	}
}

// dropExtracted adds the facts of a written or modified message, extracted
// now, to the dropped facts. Its extractor is the scratch's, kept between
// calls, and hands every fact found straight to drop (which dedupes by id,
// in first-seen order, as the extractor's own list would): no map or list
// made per message.
func (sc *measureScratch) dropExtracted(ix *FactIndex, msg *transcript.Message) {
	if sc.dropEx.emit == nil {
		sc.dropEx.emit = func(f Fact) { sc.drop(sc.dropIx.intern(f)) }
	}
	sc.dropIx = ix
	sc.dropEx.message(msg)
	sc.dropIx = nil
}

// drop adds a fact id to the dropped facts, once.
func (sc *measureScratch) drop(id int32) {
	if int(id) >= len(sc.fact) {
		sc.fact = append(sc.fact, make([]uint32, int(id)+1-len(sc.fact)+64)...)
	}
	if sc.fact[id] != sc.stamp {
		sc.fact[id] = sc.stamp
		sc.dropped = append(sc.dropped, id)
	}
}

// changedFile adds the path fact of a file a dropped tool call changed, once.
func (sc *measureScratch) changedFile(id int32) {
	if int(id) >= len(sc.file) {
		sc.file = append(sc.file, make([]uint32, int(id)+1-len(sc.file)+64)...)
	}
	if sc.file[id] != sc.stamp {
		sc.file[id] = sc.stamp
		sc.files = append(sc.files, id)
	}
}

// written is the text the strategy wrote or changed in the context after,
// without placeholders.
func (m *measurement) written() string {
	if !m.textDone {
		m.textDone = true
		// Sized first: growing the builder by doubling allocated about
		// twice the text.
		n := 0
		for i := range m.s.Ctx {
			if it := &m.s.Ctx[i]; it.Orig < 0 || it.Modified {
				n += textLen(it.Msg)
			}
		}
		var b strings.Builder
		b.Grow(n)
		for i := range m.s.Ctx {
			if it := &m.s.Ctx[i]; it.Orig < 0 || it.Modified {
				writeText(&b, it.Msg)
			}
		}
		m.text = b.String()
	}
	return m.text
}

// inWritten reports whether the text the strategy wrote holds a fact: word
// facts (paths, identifiers, URLs) are looked up among the text's own
// facts, extracted once; line facts are searched as text. A written fact
// the index lacks is no dropped fact.
func (m *measurement) inWritten(id int32) bool {
	ix, sc := m.ix, m.sc
	f := ix.facts[id]
	if f.Kind.isLine() {
		// The first searches scan the text; once they have scanned it
		// twice over, indexing it (about what a scan or two costs) pays.
		if !m.gramsDone {
			if text := m.written(); m.scanned < 2*len(text) {
				m.scanned += len(text)
				return strings.Contains(text, f.Text)
			}
			m.gramsDone = true
			m.s.grams.reset(m.written())
		}
		return m.s.grams.contains(f.Text)
	}
	if !m.wordsDone {
		m.wordsDone = true
		if len(sc.written) < len(ix.facts) {
			sc.written = make([]uint32, len(ix.facts)*5/4+64)
		}
		sc.markWritten(ix, m.written())
	}
	return int(id) < len(sc.written) && sc.written[id] == sc.stamp
}

// markWritten marks, in written, the indexed word facts of the text a
// strategy wrote. Its extractor is the scratch's, kept between calls, and
// hands every fact found (repeats too: marking is idempotent) straight to
// the marking.
func (sc *measureScratch) markWritten(ix *FactIndex, text string) {
	if sc.writtenEx.emit == nil {
		sc.writtenEx.emit = func(f Fact) {
			if id, ok := sc.dropIx.ids[f.Kind][f.Text]; ok {
				sc.written[id] = sc.stamp
			}
		}
	}
	sc.dropIx = ix
	sc.writtenEx.message(&transcript.Message{Blocks: []transcript.Block{{Kind: transcript.BlockText, Text: text}}})
	sc.dropIx = nil
}

// held reports whether the context after holds a fact: a verbatim recorded
// message has it, or the written text does; a path also counts as held
// when its file name is.
func (m *measurement) held(id int32) bool {
	if m.ix.heldBy(id, m.verbatim) || m.inWritten(id) {
		return true
	}
	if b := m.ix.base[id]; b >= 0 {
		return m.ix.heldBy(b, m.verbatim) || m.inWritten(b)
	}
	return false
}

// needRecall fills the need figures (dropped facts used again after the
// compaction point, and how many the context after holds, per kind) and
// error recall (dropped error facts held, needed later or not).
func (m *measurement) needRecall(ev *Event) {
	var need, kept [numFactKinds]int
	errTotal, errKept := 0, 0
	n := len(m.s.T.Messages)
	for _, id := range m.sc.dropped {
		k := m.ix.facts[id].Kind
		held := -1
		if k == FactError {
			errTotal++
			if held = b2i(m.held(id)); held == 1 {
				errKept++
			}
		}
		if !m.ix.neededAfter(id, m.s.Cursor, n) {
			continue
		}
		need[k]++
		if held < 0 {
			held = b2i(m.held(id))
		}
		kept[k] += held
	}
	// The detail is written into a buffer on the stack: one string made
	// per event, where joining parts made one per kind and the join.
	var buf [128]byte
	detail := buf[:0]
	for k := FactKind(0); k < numFactKinds; k++ {
		ev.NeedFacts += need[k]
		ev.NeedKept += kept[k]
		if need[k] > 0 {
			if len(detail) > 0 {
				detail = append(detail, ';')
			}
			detail = append(detail, k.String()...)
			detail = append(detail, '=')
			detail = strconv.AppendInt(detail, int64(kept[k]), 10)
			detail = append(detail, '/')
			detail = strconv.AppendInt(detail, int64(need[k]), 10)
		}
	}
	ev.NeedDetail = string(detail)
	ev.ErrorRecall = ratio(errKept, errTotal)
}

// fileRecall fills the share of files changed by dropped tool calls that the
// context after still names.
func (m *measurement) fileRecall(ev *Event) {
	kept := 0
	for _, id := range m.sc.files {
		if m.held(id) {
			kept++
		}
	}
	ev.FileRecall = ratio(kept, len(m.sc.files))
}

// intentKept fills whether the last user intent survived: the latest prompt
// before the compaction point is kept verbatim, or its first sentence is in
// the written text.
func (m *measurement) intentKept(ev *Event) {
	s := m.s
	p := int(s.promptBefore[s.Cursor])
	if p < 0 {
		return
	}
	kept := m.verbatim(p)
	if !kept {
		if key := intentKey(s.T.Messages[p].Text()); key != "" {
			s.collapsed = appendCollapsed(s.collapsed[:0], m.written())
			kept = bytes.Contains(s.collapsed, []byte(key))
		}
	}
	ev.IntentKept = &kept
}

// pathBase is the file name of a path fact with a directory part, when the
// name is distinctive enough to stand for it (it has an extension): a
// summary that says auth.go keeps /home/u/p/auth.go. "" otherwise.
func pathBase(f Fact) string {
	if f.Kind != FactPath {
		return ""
	}
	i := strings.LastIndexAny(f.Text, "/\\")
	if i < 0 || i == len(f.Text)-1 {
		return ""
	}
	base := f.Text[i+1:]
	if dot := strings.LastIndexByte(base, '.'); dot <= 0 || dot == len(base)-1 {
		return ""
	}
	return base
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// intentKey is what must survive of a prompt for its intent to count as
// kept when the prompt itself is gone: its first sentence (firstSentence),
// at most 100 characters (the seeds' goal extraction keeps 100).
func intentKey(prompt string) string { return firstSentence(prompt, 100) }

func collapseSpace(s string) string { return strings.Join(strings.Fields(s), " ") }

// appendCollapsed appends collapseSpace(s) to b, without splitting s into
// fields first.
func appendCollapsed(b []byte, s string) []byte {
	start := len(b)
	space := false
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if asciiSpace[c] {
				space = true
			} else {
				if space && len(b) > start {
					b = append(b, ' ')
				}
				space = false
				b = append(b, c)
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if unicode.IsSpace(r) {
			space = true
		} else {
			if space && len(b) > start {
				b = append(b, ' ')
			}
			space = false
			b = append(b, s[i:i+size]...)
		}
		i += size
	}
	return b
}

// asciiSpace marks the ASCII bytes unicode.IsSpace reports as space.
var asciiSpace = [utf8.RuneSelf]bool{'\t': true, '\n': true, '\v': true, '\f': true, '\r': true, ' ': true}

// textLen is the length of what writeText writes of a message.
func textLen(m *transcript.Message) int {
	n := 0
	for i := range m.Blocks {
		bl := &m.Blocks[i]
		if bl.Kind == transcript.BlockToolResult && isPlaceholder(bl) {
			continue
		}
		switch bl.Kind {
		case transcript.BlockToolUse:
			n += len(bl.Input) + len(bl.Command)
		default:
			n += len(bl.Text)
		}
		n++
	}
	return n
}

// writeText appends a message's visible text to b, without the
// placeholders strategies put in place of outputs (they hold no facts).
func writeText(b *strings.Builder, m *transcript.Message) {
	for i := range m.Blocks {
		bl := &m.Blocks[i]
		if bl.Kind == transcript.BlockToolResult && isPlaceholder(bl) {
			continue
		}
		switch bl.Kind {
		case transcript.BlockToolUse:
			b.WriteString(bl.Input)
			b.WriteString(bl.Command)
		default:
			b.WriteString(bl.Text)
		}
		b.WriteByte('\n')
	}
}
