package anchors

import (
	"encoding/binary"
	"fmt"
	"os"
	"sync"

	"github.com/compactbench/compactbench/internal/tempfile"
)

// labelMem is how many bytes of encoded labels a LabelSet keeps in memory
// before it moves them to its temporary file (a variable for tests).
var labelMem = 1 << 20

// labelStore holds a LabelSet's labels encoded one after another (strings
// as length and bytes, numbers as varints, the label file as its number):
// the first ones in a temporary file (removed from its directory as soon as
// it is created, where the system allows; it closes when the set is
// collected), the last ones, at most labelMem bytes, in memory. A label
// costs 8 bytes of memory for its offset, whatever its strings. If the
// file cannot be created or written, the labels stay in memory: correct,
// only not bounded. It is written only while the set is built and read
// concurrently afterwards.
type labelStore struct {
	files   []string // label files by number
	fileNum map[string]uint64
	offs    []int64 // where each label's record starts
	f       *os.File
	fsize   int64  // bytes in f: the records before it are in the file
	mem     []byte // the records from fsize on
	inMem   bool   // the file failed: keep everything in mem
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
	st.offs = append(st.offs, st.fsize+int64(len(st.mem)))
	b := st.mem
	for _, s := range [...]string{l.Transcript, string(l.Type), l.Note, l.PromptUUID, l.Timestamp, l.PromptHead} {
		b = binary.AppendUvarint(b, uint64(len(s)))
		b = append(b, s...)
	}
	b = binary.AppendVarint(b, int64(l.Turn))
	b = binary.AppendUvarint(b, fn)
	b = binary.AppendVarint(b, int64(l.Line))
	st.mem = b
	if len(st.mem) >= labelMem && !st.inMem {
		st.spill()
	}
}

// spill moves the records in memory to the end of the file.
func (st *labelStore) spill() {
	if st.f == nil {
		f, err := tempfile.Unlinked("compactbench-labels")
		if err != nil {
			st.inMem = true
			return
		}
		st.f = f
	}
	if _, err := st.f.WriteAt(st.mem, st.fsize); err != nil {
		st.inMem = true // what WriteAt wrote past fsize is never read
		return
	}
	st.fsize += int64(len(st.mem))
	st.mem = st.mem[:0]
}

// done ends building: the memory spare beyond the records is released.
func (st *labelStore) done() {
	st.mem = append([]byte(nil), st.mem...)
	st.offs = append([]int64(nil), st.offs...)
	st.fileNum = nil
}

// label decodes label i. A label that cannot be read back from the
// temporary file (a failing disk) is a zero Label, which names no
// transcript and no anchor, and the error is kept for Err: the callers
// (runs, gold scoring) check it before they write anything.
func (st *labelStore) label(i int) Label {
	start, end := st.offs[i], st.fsize+int64(len(st.mem))
	if i+1 < len(st.offs) {
		end = st.offs[i+1]
	}
	var rec []byte
	if start >= st.fsize {
		rec = st.mem[start-st.fsize : end-st.fsize]
	} else {
		rec = make([]byte, end-start)
		if _, err := st.f.ReadAt(rec, start); err != nil {
			st.errMu.Lock()
			if st.err == nil {
				st.err = fmt.Errorf("labels: reading label %d back from its temporary file: %w", i, err)
			}
			st.errMu.Unlock()
			return Label{}
		}
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
