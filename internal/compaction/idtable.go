package compaction

import "hash/maphash"

// idTable numbers strings (a fact's kind and text, a line) by open
// addressing: each slot holds the low 32 bits of a key's hash and its id
// + 1 (0: empty), and the caller compares the key of a slot's id. It
// replaces Go maps keyed by string for the fact index, which looks a fact
// up for every occurrence: one probe array, no string keys stored (the
// index lists them by id already), and growing re-slots by the stored hash
// bits without hashing any key again.
type idTable struct {
	slots []uint64
	n     int
}

// idSeed seeds the tables' hashes. Ids depend only on insertion order, so
// the seed changes no result.
var idSeed = maphash.MakeSeed()

// hashKey hashes a string with a kind (0 for lines).
func hashKey(k FactKind, s string) uint32 {
	h := maphash.String(idSeed, s)
	h ^= uint64(k) * 0x9E3779B97F4A7C15
	return uint32(h ^ h>>32)
}

// newIDTable makes a table for about hint keys.
func newIDTable(hint int) idTable {
	n := 64
	for n < 2*hint {
		n *= 2
	}
	return idTable{slots: make([]uint64, n)}
}

// next yields the slots to probe for hash h, starting at its home slot:
// start with i := t.home(h), then i = t.step(i).
func (t *idTable) home(h uint32) int   { return int(h) & (len(t.slots) - 1) }
func (t *idTable) step(i int) int      { return (i + 1) & (len(t.slots) - 1) }
func slotOf(h uint32, id int32) uint64 { return uint64(h)<<32 | uint64(uint32(id)+1) }

// put stores id for hash h in empty slot i (found by probing), growing the
// table past half full.
func (t *idTable) put(i int, h uint32, id int32) {
	t.slots[i] = slotOf(h, id)
	t.n++
	if 2*t.n > len(t.slots) {
		t.grow()
	}
}

// grow doubles the table.
func (t *idTable) grow() {
	old := t.slots
	t.slots = make([]uint64, 2*len(old))
	for _, sl := range old {
		if sl == 0 {
			continue
		}
		i := t.home(uint32(sl >> 32))
		for t.slots[i] != 0 {
			i = t.step(i)
		}
		t.slots[i] = sl
	}
}

// lookupFact is the id of fact (k, s) with hash h, or -1 with the empty
// slot where it goes.
func (ix *FactIndex) lookupFact(k FactKind, s string, h uint32) (id int32, slot int) {
	t := &ix.ids
	if len(t.slots) == 0 {
		*t = newIDTable(0)
	}
	for i := t.home(h); ; i = t.step(i) {
		sl := t.slots[i]
		if sl == 0 {
			return -1, i
		}
		if uint32(sl>>32) == h {
			if id := int32(uint32(sl) - 1); ix.facts[id].Kind == k && ix.facts[id].Text == s {
				return id, i
			}
		}
	}
}

// id is a fact's id, or false when the index does not have it.
func (ix *FactIndex) id(f Fact) (int32, bool) {
	id, _ := ix.lookupFact(f.Kind, f.Text, hashKey(f.Kind, f.Text))
	return id, id >= 0
}

// addFact gives fact f (hash h, not in the index, its empty slot found by
// lookupFact) the next id.
func (ix *FactIndex) addFact(f Fact, h uint32, slot int) int32 {
	id := int32(len(ix.facts))
	ix.facts = append(ix.facts, f)
	ix.ids.put(slot, h, id)
	return id
}

// lineNumber is a line's number, or -1 with the empty slot where it goes.
func (ix *FactIndex) lineNumber(l string, h uint32) (n int32, slot int) {
	t := &ix.lines
	if len(t.slots) == 0 {
		*t = newIDTable(0)
	}
	for i := t.home(h); ; i = t.step(i) {
		sl := t.slots[i]
		if sl == 0 {
			return -1, i
		}
		if uint32(sl>>32) == h {
			if n := int32(uint32(sl) - 1); ix.lineText[n] == l {
				return n, i
			}
		}
	}
}
