package anchors

import (
	"encoding/binary"
	"fmt"
	"sync"

	"github.com/compactbench/compactbench/internal/tempfile"
)

// labelMem is how many bytes of encoded labels a LabelSet keeps in memory
// before it moves them to its temporary file (a variable for tests).
var labelMem = 1 << 20

// labelStore holds a LabelSet's labels encoded one after another (strings
// as length and bytes, numbers as varints, the label file as its number):
// in a log whose memory is bounded by labelMem bytes (its file closes
// when the set is collected). A label costs 8 bytes of memory for its
// offset, whatever its strings. It is written only while the set is built
// and read concurrently afterwards.
type labelStore struct {
	files   []string // label files by number
	fileNum map[string]uint64
	offs    []int64 // where each label's record starts
	log     tempfile.Log
	// errMu guards err, the first label that could not be read back.
	errMu sync.Mutex
	err   error
}

// add encodes l at the end of the store.
func (st *labelStore) add(l *Label) {
	if st.fileNum == nil {
		st.fileNum = map[string]uint64{}
	}
	fn, ok := st.fileNum[l.File]
	if !ok {
		fn = uint64(len(st.files))
		st.fileNum[l.File] = fn
		st.files = append(st.files, l.File)
	}
	st.offs = append(st.offs, st.log.Len())
	b := st.log.Buf
	for _, s := range [...]string{l.Transcript, string(l.Type), l.Note, l.PromptUUID, l.Timestamp, l.PromptHead} {
		b = binary.AppendUvarint(b, uint64(len(s)))
		b = append(b, s...)
	}
	b = binary.AppendVarint(b, int64(l.Turn))
	b = binary.AppendUvarint(b, fn)
	b = binary.AppendVarint(b, int64(l.Line))
	st.log.Buf = b
	st.log.Flush(labelMem)
}

// done ends building: the memory spare beyond the records is released.
func (st *labelStore) done() {
	st.log.Buf = append([]byte(nil), st.log.Buf...)
	st.offs = append([]int64(nil), st.offs...)
	st.fileNum = nil
}

// label decodes label i. A label that cannot be read back from the
// temporary file (a failing disk) is a zero Label, which names no
// transcript and no anchor, and the error is kept for Err: the callers
// (runs, gold scoring) check it before they write anything.
func (st *labelStore) label(i int) Label {
	end := st.log.Len()
	if i+1 < len(st.offs) {
		end = st.offs[i+1]
	}
	rec, err := st.log.Slice(st.offs[i], end)
	if err != nil {
		st.errMu.Lock()
		if st.err == nil {
			st.err = fmt.Errorf("labels: reading label %d back from its temporary file: %w", i, err)
		}
		st.errMu.Unlock()
		return Label{}
	}
	var strs [6]string
	for k := range strs {
		n, w := binary.Uvarint(rec)
		rec = rec[w:]
		strs[k], rec = string(rec[:n]), rec[n:]
	}
	turn, w := binary.Varint(rec)
	rec = rec[w:]
	fn, w := binary.Uvarint(rec)
	rec = rec[w:]
	line, _ := binary.Varint(rec)
	return Label{Transcript: strs[0], Type: Type(strs[1]), Note: strs[2], PromptUUID: strs[3], Timestamp: strs[4],
		PromptHead: strs[5], Turn: int(turn), File: st.files[fn], Line: int(line)}
}

// readErr returns the first error reading a label back, or nil.
func (st *labelStore) readErr() error {
	st.errMu.Lock()
	defer st.errMu.Unlock()
	return st.err
}
