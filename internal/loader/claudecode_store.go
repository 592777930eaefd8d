package loader

import "strings"

// This file holds where the Claude Code reader keeps what it reads: the
// nodes of a file in fixed chunks, and the strings of one record gathered
// into one allocation.

// nodeChunk is how many nodes a chunk of a nodeList holds (a power of 2).
const (
	nodeChunkBits = 7
	nodeChunk     = 1 << nodeChunkBits
)

// nodeList holds the nodes of one file in chunks of nodeChunk: past the
// first chunk, adding a node never copies the others, as growing one slice
// by doubling did (twice their size allocated, all of it copied on the
// way). The first chunk grows as a slice does, so a short file costs no
// more than it did; a node returned by add thus stays where it is until
// the next add (the strings of a record are made before the next record
// is read).
type nodeList struct {
	chunks [][]node
	n      int
}

// len returns the number of nodes.
func (l *nodeList) len() int { return l.n }

// at returns node i.
func (l *nodeList) at(i int) *node { return &l.chunks[i>>nodeChunkBits][i&(nodeChunk-1)] }

// add appends a zero node of the given kind and returns it.
func (l *nodeList) add(kind nodeKind) *node {
	c := l.n >> nodeChunkBits
	if c == len(l.chunks) { // a chunk kept by reset is filled again as it is
		size := 0
		if c > 0 {
			size = nodeChunk
		}
		l.chunks = append(l.chunks, make([]node, 0, size))
	}
	l.chunks[c] = append(l.chunks[c], node{kind: kind})
	l.n++
	return &l.chunks[c][len(l.chunks[c])-1]
}

// drop removes the last node.
func (l *nodeList) drop() {
	l.n--
	c := l.n >> nodeChunkBits
	l.chunks[c][len(l.chunks[c])-1] = node{}
	l.chunks[c] = l.chunks[c][:len(l.chunks[c])-1]
}

// reset empties the list for the next file, keeping at most keep chunks
// (zeroed, so that they hold no strings of the file read).
func (l *nodeList) reset(keep int) {
	if len(l.chunks) > keep {
		clear(l.chunks[keep:])
		l.chunks = l.chunks[:keep]
	}
	for i := range l.chunks {
		clear(l.chunks[i])
		l.chunks[i] = l.chunks[i][:0]
	}
	l.n = 0
}

// recordStrings gathers the strings of one record and makes them as
// substrings of two strings, two allocations where each field took its
// own: one for its texts (message text, tool inputs and results), one for
// the short strings (ids, tree links, timestamp, tool names, paths,
// commands). Keeping the two apart means that a short string kept after
// its message (a message id or a tool name in a table) holds only the
// short strings of its record, never its text. The bytes added must stay
// as they are until flush: the parser's (valid until the next line is
// parsed) or scratch's.
type recordStrings struct {
	short, text stringParts
	// scratch holds text built for the record (a rendered tool input, a
	// tool result's joined parts); it is appended to only, so what was
	// added from it stays valid.
	scratch []byte
}

// stringParts are strings to be made as one.
type stringParts struct {
	parts [][]byte
	dsts  []*string
	size  int
}

// maxScratchKept is the largest scratch buffer kept from one record to
// the next.
const maxScratchKept = 1 << 20

// add sets *dst to a copy of b, a short string, at the next flush. dst
// must stay where it is until then (a field of the node last added to a
// nodeList, or of a block of a slice that is not grown).
func (a *recordStrings) add(dst *string, b []byte) { a.short.add(dst, b) }

// addText is add for a text.
func (a *recordStrings) addText(dst *string, b []byte) { a.text.add(dst, b) }

func (sp *stringParts) add(dst *string, b []byte) {
	if len(b) == 0 {
		*dst = ""
		return
	}
	sp.parts = append(sp.parts, b)
	sp.dsts = append(sp.dsts, dst)
	sp.size += len(b)
}

// flush makes the strings added since the last flush.
func (a *recordStrings) flush() {
	a.short.flush()
	a.text.flush()
	a.reset()
}

func (sp *stringParts) flush() {
	if len(sp.parts) == 0 {
		return
	}
	var sb strings.Builder
	sb.Grow(sp.size)
	for _, p := range sp.parts {
		sb.Write(p)
	}
	all, off := sb.String(), 0
	for i, p := range sp.parts {
		*sp.dsts[i] = all[off : off+len(p)]
		off += len(p)
	}
}

// reset forgets the strings added since the last flush.
func (a *recordStrings) reset() {
	a.short.reset()
	a.text.reset()
	if cap(a.scratch) > maxScratchKept {
		a.scratch = nil
	}
	a.scratch = a.scratch[:0]
}

func (sp *stringParts) reset() {
	clear(sp.parts) // drop the references to the parser's bytes
	clear(sp.dsts)
	sp.parts, sp.dsts, sp.size = sp.parts[:0], sp.dsts[:0], 0
}
