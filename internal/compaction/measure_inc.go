package compaction

// fullMeasure makes every measure start from scratch (markAfter), for tests
// that compare it with the incremental path.
var fullMeasure bool

// incState is what measure keeps between compactions of one replay: the
// marks of the context as of the last measure (its first marked items),
// which the next measure updates by what changed instead of marking the
// whole context again.
type incState struct {
	// mark is the stamp of the marks in verbatim, at and unchanged; live
	// says they describe the first marked items of the context.
	mark   uint32
	live   bool
	marked int
	// dup is set when a recorded message or an item id is marked twice:
	// the marks then cannot be updated item by item.
	dup bool
	// turnCount is, by turn, how many marked items belong to it; turns is
	// how many turns have one.
	turnCount []int32
	turns     int
	// force counts marked items that make pairs count by tool id.
	force int
	// orphans and dangling are the marked context's pair counts, valid
	// when pairsLive.
	orphans, dangling int
	pairsLive         bool
	// taStamp/taCount count, by turn, the items of the changed tail of the
	// context after; taSeen dedupes its turns.
	taStamp, taSeen []uint32
	taCount         []int32
	// seen dedupes the recorded messages whose pairs a shift touches;
	// touched lists them.
	seen    []uint32
	touched []int
}

// forces reports whether an item makes pairs count by tool id: it holds
// tool blocks that are not its recorded message's, as recorded.
func (sc *measureScratch) forces(sh *Shared, it *Item) bool {
	if it.Orig >= 0 && !it.Modified {
		return false
	}
	if it.Orig >= 0 && sc.keepsTools(it, sh.partners[it.Orig]) {
		return false
	}
	return hasTools(it.Msg)
}

// add marks item i of the context after.
func (sc *measureScratch) add(s *Sim, i int) {
	in := &sc.inc
	it := &s.Ctx[i]
	if sc.forces(s.Shared, it) {
		in.force++
	}
	if it.Orig >= 0 {
		if sc.at[it.Orig].stamp == in.mark {
			in.dup = true
		}
		sc.setAt(it.Orig, i)
		t := s.TurnOf[it.Orig]
		if in.turnCount[t] == 0 {
			in.turns++
		}
		in.turnCount[t]++
	}
	if it.Orig >= 0 && !it.Modified {
		sc.verbatim[it.Orig] = in.mark
		return
	}
	if sc.unchanged[it.id] == in.mark {
		in.dup = true
	}
	sc.unchanged[it.id] = in.mark
}

// remove unmarks item it, marked at position i; false when the marks do not
// hold it there (they are then rebuilt).
func (sc *measureScratch) remove(s *Sim, it *Item, i int) bool {
	in := &sc.inc
	if it.Orig >= 0 {
		if sc.at[it.Orig] != (stampedPos{in.mark, int32(i)}) {
			return false
		}
		sc.at[it.Orig] = stampedPos{}
		t := s.TurnOf[it.Orig]
		if in.turnCount[t]--; in.turnCount[t] == 0 {
			in.turns--
		}
	}
	if it.Orig >= 0 && !it.Modified {
		sc.verbatim[it.Orig] = 0
	} else {
		if it.id <= 0 || sc.unchanged[it.id] != in.mark {
			return false
		}
		sc.unchanged[it.id] = 0
	}
	if sc.forces(s.Shared, it) {
		in.force--
	}
	return true
}

// shift updates the marks from the context of the last measure to the
// context after. The context before starts with the marked items (only
// appends happened since) and shares its first s.same items with the
// context after: shift unmarks the marked items past that prefix, marks the
// context after's items past it, and moves the pair counts by the messages
// whose pairs that touches. False when the marks cannot be updated (they
// are then rebuilt by markAfter).
func (m *measurement) shift() bool {
	s, sc, in := m.s, m.sc, &m.sc.inc
	if in.marked > m.nBefore() {
		return false
	}
	k := min(s.same, in.marked)
	pairs := in.pairsLive && in.force == 0
	if pairs {
		in.touched = in.touched[:0]
		m.touchBefore(k, in.marked)
		m.touch(s.Ctx[k:])
		m.pairDelta(-1)
	}
	for i := in.marked - 1; i >= k; i-- {
		if !sc.remove(s, m.beforeAt(i), i) {
			return false
		}
	}
	for i := k; i < len(s.Ctx); i++ {
		sc.add(s, i)
	}
	in.marked = len(s.Ctx)
	if in.dup {
		return false
	}
	if pairs && in.force == 0 {
		m.pairDelta(1)
	} else {
		in.pairsLive = false
	}
	return true
}

// touchBefore touches the items [from, to) of the context before.
func (m *measurement) touchBefore(from, to int) {
	if from < len(m.head) {
		m.touch(m.head[from:min(to, len(m.head))])
	}
	if to > len(m.head) {
		m.touch(m.tail[max(from-len(m.head), 0) : to-len(m.head)])
	}
}

// touch lists the recorded messages of items and their tool partners, once.
func (m *measurement) touch(items []Item) {
	sc := m.sc
	in := &sc.inc
	for i := range items {
		o := items[i].Orig
		if o < 0 {
			continue
		}
		if in.seen[o] != sc.stamp {
			in.seen[o] = sc.stamp
			in.touched = append(in.touched, o)
		}
		for _, tp := range m.s.partners[o] {
			if p := tp.partner; p >= 0 && in.seen[p] != sc.stamp {
				in.seen[p] = sc.stamp
				in.touched = append(in.touched, p)
			}
		}
	}
}

// pairDelta adds (sign 1) or takes away (sign -1) the broken pairs of the
// touched messages, as the marks stand, to the pair counts.
func (m *measurement) pairDelta(sign int) {
	in := &m.sc.inc
	for _, x := range in.touched {
		o, d := m.pairsOf(x)
		in.orphans += sign * o
		in.dangling += sign * d
	}
}

// pairsOf counts the orphan results and dangling calls of recorded message
// x where the marks place it (none when it is absent), as pairs does.
func (m *measurement) pairsOf(x int) (orphans, dangling int) {
	sc := m.sc
	at := sc.at[x]
	if at.stamp != sc.inc.mark {
		return 0, 0
	}
	i := int(at.pos)
	for _, tp := range m.s.partners[x] {
		ok := tp.partner == x
		if !ok && tp.partner >= 0 {
			pa := sc.at[tp.partner]
			ok = pa.stamp == sc.inc.mark && (tp.result && int(pa.pos) < i || !tp.result && int(pa.pos) > i)
		}
		if ok || m.s.Lost[tp.id] {
			continue
		}
		if tp.result {
			orphans++
		} else {
			dangling++
		}
	}
	return orphans, dangling
}

// pairsAfter is the context after's orphan results and dangling calls: the
// counts shift kept up to date, or pairs over the whole context.
func (m *measurement) pairsAfter() (orphans, dangling int) {
	in := &m.sc.inc
	if in.pairsLive && in.force == 0 {
		return in.orphans, in.dangling
	}
	orphans, dangling = m.sc.pairs(m.s.Shared, m.s.Ctx)
	if in.force == 0 {
		in.orphans, in.dangling, in.pairsLive = orphans, dangling, true
	}
	return orphans, dangling
}

// scanTail is scanBefore for a shifted measure: the context before and
// after share their first s.same items, which drop nothing and whose turns
// are all kept, so only the rest of the context before is walked.
func (m *measurement) scanTail(ev *Event) {
	s, sc := m.s, m.sc
	k := s.same
	sc.dropped, sc.files = sc.dropped[:0], sc.files[:0]
	ev.KeptEverything = true
	m.countTail(k)
	kept, summarized := sc.inc.turns-m.tailOnlyTurns(k), 0
	for i := k; i < m.nBefore(); i++ {
		it := m.beforeAt(i)
		if it.Orig >= 0 {
			if t := s.TurnOf[it.Orig]; sc.turnBefore[t] != sc.stamp {
				sc.turnBefore[t] = sc.stamp
				switch {
				case m.inPrefix(t):
				case sc.inc.turnCount[t] > 0:
					kept++
				default:
					summarized++
				}
			}
		}
		m.scanItem(ev, it)
	}
	ev.KeptTurns, ev.SummarizedTurns = kept, summarized
}

// countTail counts, by turn, the items of the context after from k on.
func (m *measurement) countTail(k int) {
	s, sc := m.s, m.sc
	in := &sc.inc
	for i := k; i < len(s.Ctx); i++ {
		if o := s.Ctx[i].Orig; o >= 0 {
			t := s.TurnOf[o]
			if in.taStamp[t] != sc.stamp {
				in.taStamp[t], in.taCount[t] = sc.stamp, 0
			}
			in.taCount[t]++
		}
	}
}

// inPrefix reports whether turn t has an item among the context after's
// first s.same items (countTail has counted the rest).
func (m *measurement) inPrefix(t int) bool {
	in := &m.sc.inc
	n := in.turnCount[t]
	if in.taStamp[t] == m.sc.stamp {
		n -= in.taCount[t]
	}
	return n > 0
}

// tailOnlyTurns counts the turns of the context after that have items from
// k on and none before.
func (m *measurement) tailOnlyTurns(k int) int {
	s, sc := m.s, m.sc
	n := 0
	for i := k; i < len(s.Ctx); i++ {
		if o := s.Ctx[i].Orig; o >= 0 {
			if t := s.TurnOf[o]; sc.inc.taSeen[t] != sc.stamp {
				sc.inc.taSeen[t] = sc.stamp
				if !m.inPrefix(t) {
					n++
				}
			}
		}
	}
	return n
}
