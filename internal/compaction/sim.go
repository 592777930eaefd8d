package compaction

import (
	"strconv"

	"github.com/compactbench/compactbench/internal/anchors"
	"github.com/compactbench/compactbench/internal/tokens"
	"github.com/compactbench/compactbench/internal/transcript"
)

// Ruler is what the replay needs of a token ruler (tokens.Ruler has it).
type Ruler interface {
	Name() string
	// Message counts a message, caching per block.
	Message(m *transcript.Message) int
	// Text counts fresh text, uncached.
	Text(s string) int
	// MessageOverhead is the ruler's framing constant per message.
	MessageOverhead() int
	// Block counts one block, caching it.
	Block(b *transcript.Block) int
}

// Item is one message of a simulated context.
type Item struct {
	// Msg is the message; recorded ones point into the transcript and are
	// never changed (Modify copies).
	Msg *transcript.Message
	// Orig is the message's index in the recording, or -1 for a message a
	// strategy wrote (a summary, a continuation notice).
	Orig int
	// Modified marks a recorded message whose content a strategy changed
	// (a masked or cleared tool output).
	Modified bool
	// id tells synthetic items apart when the cached prefix is compared.
	id int
}

// Sim is the state of one strategy's replay over one transcript, as the
// strategy sees it when its trigger is asked and when it compacts.
type Sim struct {
	*Shared
	// Ctx is the strategy's current context (overhead excluded).
	Ctx []Item
	// Overhead is the fixed prompt overhead (system prompt and tools), in
	// metric tokens.
	Overhead int
	// Window is the model's context window (the overflow limit).
	Window int
	// Metric is the run's metric ruler.
	Metric Ruler
	// Round is the number of compactions done so far.
	Round int
	// Call is the index (into Calls) of the upcoming API call; len(Calls)
	// after the last one.
	Call int
	// Cursor is how many recorded messages the context has received:
	// Messages[:Cursor] are in the past.
	Cursor int
	// Rulers gives other rulers by name, for strategies that trigger on
	// their own count.
	Rulers func(name string) (Ruler, error)
	// Override is the --window override (0 when none): strategies with
	// their own model tables use it instead.
	Override int
	// Summarizer writes summaries (Deterministic by default).
	Summarizer Summarizer
	// summary describes the last summary written (its text left out);
	// Replay copies it onto the compaction's event.
	summary Summary

	tok   []int // metric tokens of each Ctx item, thinking included
	think []int // metric tokens of each Ctx item's thinking blocks
	// cumTok and cumThink are running sums of tok and think (through each
	// item), so that CacheRead does not add up the prefix on every call.
	cumTok, cumThink []int
	sc               measureScratch
	// aux keeps running totals of the context by other rulers (Count).
	aux []*auxTotal
	// named caches Ruler's answers.
	named map[string]Ruler
	// strip is set for models whose API drops the thinking of earlier turns
	// (tokens.StripsOldThinking): thinking before the last prompt is not
	// part of the prompt.
	strip      bool
	lastPrompt int // index in Ctx of the last real prompt, -1 for none
	total      int
	stable     int // leading items unchanged since the previous call
	// same is how many leading items the last replace kept as they were
	// (the prefix measure need not look at again).
	same   int
	nextID int
	// tail holds the items the last replace took out of the context (the
	// old context from s.same on) with their counts (ctx, tok and think):
	// the context before a compaction is its first s.same items followed
	// by tail (measure reads it). It points into spare.
	tail simArrays
	// spare holds a second set of arrays, which replace fills with the
	// tail or with the next context, whichever is shorter to copy.
	spare simArrays
}

// simArrays are a context's arrays (a Sim's context, spare or tail).
type simArrays struct {
	ctx                          []Item
	tok, think, cumTok, cumThink []int
}

// factMarks are a measure scratch's marks by fact id (fact, file, written)
// and the stamp they were made with. Fact ids are the transcript's (its
// FactIndex), so the next replay's measures can take the arrays over as they
// are: its stamps continue from stamp, and no older mark equals a newer
// stamp.
type factMarks struct {
	fact, file, written []uint32
	stamp               uint32
}

// reuse gives a new Sim the arrays a previous replay of the transcript left
// (strategies replay one transcript in turn), emptied.
func (s *Sim) reuse() {
	if fm := s.Shared.marks; fm.stamp != 0 {
		s.Shared.marks = factMarks{}
		s.sc.fact, s.sc.file, s.sc.written, s.sc.stamp = fm.fact, fm.file, fm.written, fm.stamp
	}
	if p := s.Shared.pool; p != nil {
		s.Shared.pool = nil
		s.Ctx, s.tok, s.think, s.cumTok, s.cumThink = p[0].ctx[:0], p[0].tok[:0], p[0].think[:0], p[0].cumTok[:0], p[0].cumThink[:0]
		s.spare = p[1]
		return
	}
	// The first replay of the transcript: the context holds at most its
	// messages and a few a strategy wrote, so arrays of that size seldom
	// grow (growing them from empty allocates twice over).
	n := len(s.T.Messages) + 8
	s.Ctx, s.tok, s.think = make([]Item, 0, n), make([]int, 0, n), make([]int, 0, n)
	s.cumTok, s.cumThink = make([]int, 0, n), make([]int, 0, n)
}

// release hands the Sim's arrays to the next replay of the transcript
// (which overwrites them: the finished Sim's context is valid until then).
func (s *Sim) release() {
	s.Shared.pool = &[2]simArrays{{s.Ctx, s.tok, s.think, s.cumTok, s.cumThink}, s.spare}
	s.Shared.marks = factMarks{s.sc.fact, s.sc.file, s.sc.written, s.sc.stamp}
}

// Shared holds what every strategy's replay of one transcript reads: the
// recording, its turns and calls, and the fact index.
// Strategies replay one Shared in turn, never at once (it caches and
// lends arrays between replays).
type Shared struct {
	T     *transcript.Transcript
	Turns []transcript.Turn
	// TurnOf maps a message index to its turn index.
	TurnOf []int
	// Calls are the message indices of the API calls
	// (transcript.Transcript.Calls: every model response, whether or not
	// usage was recorded).
	Calls []int
	// facts is built on first use (Facts): only transcripts with a
	// compaction need it.
	facts *FactIndex
	// Lost are tool ids whose pairing the recording itself broke; they are
	// not held against strategies.
	Lost map[string]bool
	// prompts caches Message.IsPrompt of every recorded message;
	// promptBefore[c] is the latest prompt among Messages[:c], or -1.
	prompts      []bool
	promptBefore []int32
	// partners lists, per recorded message, its tool blocks with the index
	// of the message holding the other half of the pair (-1: none).
	partners [][]toolPartner
	// Drops maps the index (in Calls) of each call after an unrecorded drop
	// (tokens.IsDrop: the real context fell with no compaction recorded) to
	// the fall in real tokens.
	Drops map[int]int64
	// RuleSets are rule sets given by the caller (a rules file), by name;
	// other names resolve to the built-in sets.
	RuleSets map[string]*anchors.RuleSet

	evals map[string]*anchors.Evaluation
	// counts caches, for the ruler countRuler, each recorded message's
	// tokens and thinking tokens: every strategy's replay appends every
	// message, and reading two numbers beats adding up its blocks' cached
	// counts again.
	countRuler Ruler
	counts     []msgCount
	// auxCounts caches recorded messages' counts by the other rulers
	// strategies count with (Sim.Count).
	auxCounts map[Ruler][]int32
	// pool holds the arrays of the last finished replay (Sim.reuse).
	pool *[2]simArrays
	// marks holds the fact marks of the last finished replay's measures
	// (Sim.reuse); none when its stamp is 0.
	marks factMarks
	// collapsed is intentKept's buffer for the written text, spaces
	// collapsed.
	collapsed []byte
	// cues caches, by recorded message, the sentences gather finds in it.
	cues []*msgCues
	// grams indexes the text a compaction wrote for its line-fact searches
	// (measurement.inWritten); every replay's measures reuse its arrays.
	grams gramIndex
}

// NewShared prepares a transcript for replay with the shipped model table.
func NewShared(t *transcript.Transcript) *Shared { return NewSharedWith(t, nil) }

// NewSharedWith prepares a transcript for replay; models (nil: the shipped
// table) says which models' APIs strip earlier thinking, which unrecorded
// drops must not count.
func NewSharedWith(t *transcript.Transcript, models *tokens.Models) *Shared {
	return NewSharedTurns(t, t.Turns(), models)
}

// NewSharedTurns is NewSharedWith given the transcript's turns (t.Turns()),
// for a caller that has grouped them already.
func NewSharedTurns(t *transcript.Transcript, turns []transcript.Turn, models *tokens.Models) *Shared {
	sh := &Shared{T: t, Turns: turns, Lost: map[string]bool{}}
	sh.TurnOf = transcript.TurnOf(sh.Turns, len(t.Messages))
	sh.prompts = make([]bool, len(t.Messages))
	sh.Calls = t.Calls()
	sh.promptBefore = make([]int32, len(t.Messages)+1)
	sh.promptBefore[0] = -1
	for i := range t.Messages {
		sh.prompts[i] = t.Messages[i].IsPrompt()
		sh.promptBefore[i+1] = sh.promptBefore[i]
		if sh.prompts[i] {
			sh.promptBefore[i+1] = int32(i)
		}
	}
	sh.Drops = dropsByCall(t, sh.Calls, models)
	sh.partners = toolPartners(t.Messages)
	for _, tps := range sh.partners {
		for _, tp := range tps {
			if tp.partner < 0 { // a result without its call, a call without its result
				sh.Lost[tp.id] = true
			}
		}
	}
	return sh
}

// dropsByCall keys tokens.UnrecordedDrops by the call's index in calls.
func dropsByCall(t *transcript.Transcript, calls []int, models *tokens.Models) map[int]int64 {
	byMsg := tokens.UnrecordedDrops(t, models)
	if len(byMsg) == 0 {
		return nil
	}
	out := make(map[int]int64, len(byMsg))
	for k, ci := range calls {
		if fall, ok := byMsg[ci]; ok {
			out[k] = fall
		}
	}
	return out
}

// Facts returns the transcript's fact index, building it on first use.
func (sh *Shared) Facts() *FactIndex {
	if sh.facts == nil {
		sh.facts = IndexFacts(sh.T)
	}
	return sh.facts
}

// Tokens is the context's size by the metric ruler (overhead excluded).
func (s *Sim) Tokens() int { return s.total }

// Prompt is the size of the prompt the upcoming call would send.
func (s *Sim) Prompt() int { return s.Overhead + s.total }

// ItemTokens is the metric size of Ctx[i] as the prompt carries it.
func (s *Sim) ItemTokens(i int) int {
	if s.strip && i < s.lastPrompt {
		return s.tok[i] - s.think[i]
	}
	return s.tok[i]
}

// CacheRead is the simulated prompt-cache hit of the upcoming call: the
// overhead and the leading context items unchanged since the previous call.
// The first call reads nothing.
func (s *Sim) CacheRead() int {
	if s.Call == 0 {
		return 0
	}
	n := s.Overhead + prefix(s.cumTok, s.stable)
	if s.strip {
		n -= prefix(s.cumThink, min(s.stable, max(s.lastPrompt, 0)))
	}
	return n
}

// prefix is the sum of the first k values whose running sums are cum.
func prefix(cum []int, k int) int {
	if k <= 0 {
		return 0
	}
	return cum[k-1]
}

// auxTotal is a running count of the context by another ruler.
type auxTotal struct {
	r     Ruler
	total int
	// counts caches the recorded messages' counts by r, +1 (0: not yet),
	// shared by every replay of the transcript (Shared.auxCounts).
	counts []int32
}

// of is an item's count by the ruler.
func (a *auxTotal) of(it *Item) int {
	if it.Orig < 0 || it.Modified {
		return a.r.Message(it.Msg)
	}
	c := &a.counts[it.Orig]
	if *c == 0 {
		*c = int32(a.r.Message(it.Msg)) + 1
	}
	return int(*c) - 1
}

// Count is the context's size by another ruler. The first call for a ruler
// (by name) counts the context; later calls read a total kept up to date as
// the context changes.
func (s *Sim) Count(r Ruler) int {
	for _, a := range s.aux {
		if a.r.Name() == r.Name() {
			return a.total
		}
	}
	sh := s.Shared
	if sh.auxCounts == nil {
		sh.auxCounts = map[Ruler][]int32{}
	}
	counts, ok := sh.auxCounts[r]
	if !ok {
		counts = make([]int32, len(sh.T.Messages))
		sh.auxCounts[r] = counts
	}
	a := &auxTotal{r: r, counts: counts}
	for i := range s.Ctx {
		a.total += a.of(&s.Ctx[i])
	}
	s.aux = append(s.aux, a)
	return a.total
}

// Synthetic makes a message a strategy writes.
func (s *Sim) Synthetic(role transcript.Role, text string) Item {
	s.nextID++
	return Item{Orig: -1, id: s.nextID, Msg: &transcript.Message{
		Role: role, Blocks: []transcript.Block{{Kind: transcript.BlockText, Text: text}}}}
}

// Original returns recorded message i as a context item.
func (s *Sim) Original(i int) Item { return Item{Msg: &s.T.Messages[i], Orig: i} }

// append adds recorded messages [s.Cursor, to) to the context.
func (s *Sim) append(to int) {
	for ; s.Cursor < to; s.Cursor++ {
		it := s.Original(s.Cursor)
		s.push(it)
	}
}

// push adds an item at the end of the context, keeping the totals.
func (s *Sim) push(it Item) {
	if it.Orig >= 0 && !it.Modified {
		c := s.count(it.Orig)
		s.pushCounted(it, int(c.tok), int(c.think))
		return
	}
	s.pushCounted(it, s.Metric.Message(it.Msg), s.thinking(it.Msg))
}

// msgCount is a recorded message's metric tokens and thinking tokens, once
// known (set).
type msgCount struct {
	tok, think int32
	set        bool
}

// count is recorded message o's metric tokens and thinking tokens, counted
// once per transcript and ruler (Shared.counts).
func (s *Sim) count(o int) msgCount {
	sh := s.Shared
	if sh.countRuler != s.Metric || len(sh.counts) != len(sh.T.Messages) {
		sh.countRuler, sh.counts = s.Metric, make([]msgCount, len(sh.T.Messages))
	}
	c := &sh.counts[o]
	if !c.set {
		m := &sh.T.Messages[o]
		*c = msgCount{tok: int32(s.Metric.Message(m)), think: int32(s.thinking(m)), set: true}
	}
	return *c
}

// pushCounted is push with the item's counts already known.
func (s *Sim) pushCounted(it Item, n, th int) {
	if s.strip && s.isPrompt(&it) {
		// The thinking of every earlier turn leaves the prompt.
		for i := max(s.lastPrompt, 0); i < len(s.Ctx); i++ {
			s.total -= s.think[i]
		}
		s.lastPrompt = len(s.Ctx)
	}
	s.cumTok = append(s.cumTok, prefix(s.cumTok, len(s.Ctx))+n)
	s.cumThink = append(s.cumThink, prefix(s.cumThink, len(s.Ctx))+th)
	s.Ctx = append(s.Ctx, it)
	s.tok = append(s.tok, n)
	s.think = append(s.think, th)
	s.total += n
	for _, a := range s.aux {
		a.total += a.of(&it)
	}
}

// isPrompt is Message.IsPrompt, precomputed for recorded messages.
func (s *Sim) isPrompt(it *Item) bool {
	if it.Orig >= 0 && !it.Modified {
		return s.prompts[it.Orig]
	}
	return it.Msg.IsPrompt()
}

// setStrip switches the thinking rule (the upcoming call's model decides)
// and recounts the context's total when it changes.
func (s *Sim) setStrip(strip bool) {
	if strip == s.strip {
		return
	}
	// The context moves to the spare arrays and is pushed back.
	sp, stable := &s.spare, s.stable
	sp.ctx, sp.tok, sp.think = append(sp.ctx[:0], s.Ctx...), append(sp.tok[:0], s.tok...), append(sp.think[:0], s.think...)
	ctx, tok, think := sp.ctx, sp.tok, sp.think
	s.strip = strip
	s.Ctx, s.tok, s.think, s.total, s.lastPrompt = s.Ctx[:0], s.tok[:0], s.think[:0], 0, -1
	s.cumTok, s.cumThink = s.cumTok[:0], s.cumThink[:0]
	for _, a := range s.aux {
		a.total = 0
	}
	for i, it := range ctx {
		s.pushCounted(it, tok[i], think[i])
	}
	s.stable = stable
}

func (s *Sim) thinking(m *transcript.Message) int {
	n := 0
	for i := range m.Blocks {
		if m.Blocks[i].Kind == transcript.BlockThinking {
			n += s.Metric.Block(&m.Blocks[i])
		}
	}
	return n
}

// replace installs a compacted context and works out how much of its start
// is unchanged (the prompt-cache prefix). The leading run of unchanged
// items keeps its counts and running sums; the old items after it become
// s.tail (measure's context before). When most of the context stayed
// (masking), the context's arrays are rewritten in place from the first
// changed item, the old items after it copied to the spare arrays first;
// else (a summary) the next context is built in the spare arrays and the
// old ones become the tail. Either way a compaction copies the shorter
// part, not the whole context. ctx must not share the context's array
// (strategies build a new slice).
func (s *Sim) replace(ctx []Item) { s.replaceFrom(ctx, 0) }

// checkSame makes replaceFrom check what strategies say is unchanged
// (tests set it).
var checkSame bool

// replaceFrom is replace told that the first same items of ctx are the
// context's, unchanged (a lower bound: it looks further).
func (s *Sim) replaceFrom(ctx []Item, same int) {
	old := s.Ctx
	common := min(same, len(old), len(ctx)) // leading items old and ctx share
	if checkSame {
		for i := range common {
			if !sameItem(&old[i], &ctx[i]) {
				panic("compaction: a strategy said the context's first items were unchanged, and item " + strconv.Itoa(i) + " was not")
			}
		}
	}
	for common < len(old) && common < len(ctx) && sameItem(&old[common], &ctx[common]) {
		common++
	}
	for _, a := range s.aux {
		for i := common; i < len(old); i++ {
			a.total -= a.of(&old[i]) // pushCounted adds the new ones
		}
	}
	lastPrompt, total := s.prefixState(common)
	sp, t := &s.spare, &s.tail
	if 2*common >= len(old) {
		t.ctx = append(sp.ctx[:0], old[common:]...)
		t.tok = append(sp.tok[:0], s.tok[common:]...)
		t.think = append(sp.think[:0], s.think[common:]...)
		sp.ctx, sp.tok, sp.think = t.ctx, t.tok, t.think
		s.Ctx, s.tok, s.think, s.cumTok, s.cumThink = old[:common], s.tok[:common], s.think[:common], s.cumTok[:common], s.cumThink[:common]
	} else {
		cur := simArrays{ctx: old, tok: s.tok, think: s.think, cumTok: s.cumTok, cumThink: s.cumThink}
		s.Ctx = append(sp.ctx[:0], old[:common]...)
		s.tok = append(sp.tok[:0], cur.tok[:common]...)
		s.think = append(sp.think[:0], cur.think[:common]...)
		s.cumTok = append(sp.cumTok[:0], cur.cumTok[:common]...)
		s.cumThink = append(sp.cumThink[:0], cur.cumThink[:common]...)
		*sp = cur
		t.ctx, t.tok, t.think = old[common:], cur.tok[common:], cur.think[common:]
	}
	s.lastPrompt, s.total = lastPrompt, total
	s.same = common
	for i := common; i < len(ctx); i++ {
		it := ctx[i]
		if j := i - common; j < len(t.ctx) && sameItem(&t.ctx[j], &it) {
			s.pushCounted(it, t.tok[j], t.think[j])
		} else {
			s.push(it)
		}
	}
	// The cached prefix is what was cached and is still there.
	s.stable = min(common, s.stable)
}

// prefixState is the last prompt and the total of the context's first k
// items: the state pushing them one by one would reach.
func (s *Sim) prefixState(k int) (lastPrompt, total int) {
	lastPrompt = s.lastPrompt // the last prompt of the whole context, or -1
	if lastPrompt >= k {
		for lastPrompt = k - 1; lastPrompt >= 0 && !s.isPrompt(&s.Ctx[lastPrompt]); lastPrompt-- {
		}
	}
	total = prefix(s.cumTok, k)
	if lastPrompt >= 0 { // set only when thinking is stripped (pushCounted)
		total -= prefix(s.cumThink, lastPrompt)
	}
	return lastPrompt, total
}

func sameItem(a, b *Item) bool {
	return a.Orig == b.Orig && a.Modified == b.Modified && a.id == b.id
}

// summarize runs the summarizer on a request and keeps its answer's
// description for the compaction's event.
func (s *Sim) summarize(r *SummaryRequest) string {
	if s.Summarizer == nil {
		s.summary = Summary{Source: SourceExtractive}
		return r.Deterministic()
	}
	s.summary = s.Summarizer.Summarize(r)
	text := s.summary.Text
	s.summary.Text = ""
	return text
}

// Modify returns a copy of a context item with new blocks, marked modified
// and given a new identity (its cached prefix breaks once, not forever).
func (s *Sim) Modify(it Item, blocks []transcript.Block) Item {
	s.nextID++
	m := *it.Msg
	m.Blocks = blocks
	it.Msg = &m
	it.Modified = true
	it.id = s.nextID
	return it
}

// called marks the upcoming call as made: everything in the context is now
// a cacheable prefix for the next one.
func (s *Sim) called() { s.stable = len(s.Ctx) }

// Ruler is the ruler a strategy parameter names, resolved once per replay:
// Rulers' answer, or the metric ruler when there is none (Config rejects
// unknown names, so that is a Sim built without Rulers).
func (s *Sim) Ruler(name string) Ruler {
	if r, ok := s.named[name]; ok {
		return r
	}
	r := s.Metric
	if s.Rulers != nil {
		if named, err := s.Rulers(name); err == nil {
			r = named
		}
	}
	if s.named == nil {
		s.named = map[string]Ruler{}
	}
	s.named[name] = r
	return r
}
