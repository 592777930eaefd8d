package loader

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"runtime"
	"strings"
	"sync"
)

// jsonValue is one value found by scanValues: an element of a top-level
// array, or a top-level value itself (a single JSON document, or one value of
// a sequence such as JSON lines).
type jsonValue struct {
	// Data is the value's text. It is only valid during the callback, which
	// may set it to nil once parsed: the buffer of a large value is then
	// freed while the caller still works on what it parsed from it.
	Data []byte
	// Index is the value's 0-based position among the values.
	Index int
	// Line and EndLine are the 1-based lines of its first and last byte.
	Line, EndLine int
	// Offset is the byte offset of its first byte.
	Offset int64
}

// bigValue is a value size above which readers drop their parser after the
// value, so that its buffers are not kept for the next one.
const bigValue = 4 << 20

// elemChunk is the size of the pieces a large value is gathered in. A value
// that outgrows one piece is assembled once, at its exact size, when it
// ends: growing one slice instead would allocate (and leave as garbage)
// several times the value's size on the way.
const elemChunk = 1 << 20

// scanProblem is structure scanValues could not split into values.
type scanProblem struct {
	Line   int
	Offset int64
	Reason string
	// Lost says that input was skipped (a truncated value, stray bytes, data
	// after the array): readers count it as one bad record. A read error or
	// an unclosed array loses nothing a record could be made of.
	Lost bool
}

// scanChunk is how much scanValues reads at a time.
const scanChunk = 256 << 10

// scanBufs recycles read buffers between files.
var scanBufs = sync.Pool{New: func() any { b := make([]byte, scanChunk); return &b }}

// scanState is where scanValues stands between two bytes.
type scanState uint8

const (
	stBetween scanState = iota // between values
	stValue                    // inside an object or array, outside strings
	stString                   // inside a string
	stScalar                   // inside a top-level number or literal
)

// valueScanner splits a JSON stream into values without decoding them. It
// holds one value at a time, so a 500 MB export costs the size of its largest
// conversation, not its own size. Inside strings it jumps from quote to quote
// with bytes.IndexByte, which is what makes it fast on text-heavy documents.
type valueScanner struct {
	fn func(*jsonValue) error
	// elem holds the current value's last bytes; full its earlier pieces.
	elem     []byte
	full     [][]byte
	fullLen  int
	line     int
	off      int64
	state    scanState
	depth    int
	started  bool // the first non-space byte was seen
	array    bool // the document is a top-level array being unwrapped
	closed   bool // that array's closing bracket was seen
	index    int
	start    int
	startOff int64
	problems []scanProblem
	stop     bool // a problem ended the scan
	// maxLine and maxDepth are the source's limits; skip, when set, is why
	// the current value is being read past without being held, and bs the
	// run of backslashes that ends what was read of it.
	maxLine, maxDepth int
	skip              string
	bs                int
}

// scanValues reads r and calls fn with each value: the elements of a
// top-level array, or else each top-level value in turn (one for a JSON
// document, one per line for JSON lines). It reports whether the document was
// an array, the structural problems met (a truncated value, data after the
// array, a read error), and fn's error, which stops the scan.
//
// Values are split by bracket depth only; whether each is valid JSON is for
// the caller's parser to say, so one malformed element costs only itself.
func scanValues(r io.Reader, fn func(*jsonValue) error) (array bool, problems []scanProblem, err error) {
	lim := limitsOf(r)
	src := sourceOf(r)
	s := &valueScanner{fn: fn, line: 1, maxLine: lim.MaxLine, maxDepth: lim.MaxDepth}
	// A small bufio.Reader finds a UTF-8 byte-order mark; reads larger than
	// its buffer then go straight to r.
	br := bufio.NewReaderSize(r, 16)
	if bom, _ := br.Peek(3); bytes.Equal(bom, []byte("\xef\xbb\xbf")) {
		br.Discard(3)
		s.off = 3
	}
	bp := scanBufs.Get().(*[]byte)
	defer scanBufs.Put(bp)
	buf := *bp
	for !s.stop {
		if src != nil {
			if err := src.cancelled(); err != nil {
				return s.array, s.problems, err
			}
		}
		n, rerr := br.Read(buf)
		if err := s.feed(buf[:n]); err != nil {
			return s.array, s.problems, err
		}
		if rerr != nil {
			if !errors.Is(rerr, io.EOF) && !s.stop {
				s.problem(s.line, s.off, fmt.Sprintf("read error: %v", rerr), false)
			}
			break
		}
	}
	if err := s.end(); err != nil {
		return s.array, s.problems, err
	}
	return s.array, s.problems, nil
}

func (s *valueScanner) problem(line int, off int64, reason string, lost bool) {
	s.problems = append(s.problems, scanProblem{Line: line, Offset: off, Reason: reason, Lost: lost})
}

// begin starts a value at the current position.
func (s *valueScanner) begin() {
	s.elem = s.elem[:0]
	s.full, s.fullLen = nil, 0
	s.start, s.startOff = s.line, s.off
}

// startSkip stops holding the current value, for reason.
func (s *valueScanner) startSkip(reason string) {
	s.bs = s.trailingBackslashes()
	s.skip = reason
	s.elem = s.elem[:0]
	s.full, s.fullLen = nil, 0
}

// dropped accounts for bytes of a value that is not held.
func (s *valueScanner) dropped(b []byte) {
	k := 0
	for k < len(b) && b[len(b)-1-k] == '\\' {
		k++
	}
	if k == len(b) {
		s.bs += k
	} else {
		s.bs = k
	}
}

// add appends bytes to the current value.
func (s *valueScanner) add(b []byte) {
	if s.skip == "" && s.fullLen+len(s.elem)+len(b) > s.maxLine {
		s.startSkip(tooLong("value", s.maxLine))
	}
	if s.skip != "" {
		s.dropped(b)
		return
	}
	for len(b) > 0 {
		room := elemChunk - len(s.elem)
		if room <= 0 {
			s.full = append(s.full, s.elem)
			s.fullLen += len(s.elem)
			s.elem = make([]byte, 0, elemChunk)
			room = elemChunk
		}
		n := min(room, len(b))
		s.elem = append(s.elem, b[:n]...)
		b = b[n:]
	}
}

// addByte appends one byte to the current value.
func (s *valueScanner) addByte(c byte) {
	if s.skip == "" && len(s.elem) < elemChunk && s.fullLen+len(s.elem) < s.maxLine {
		s.elem = append(s.elem, c)
		return
	}
	s.add([]byte{c})
}

// trailingBackslashes counts the backslashes that end the current value.
func (s *valueScanner) trailingBackslashes() int {
	if s.skip != "" {
		return s.bs
	}
	n := 0
	for i := len(s.elem) - 1; i >= 0; i-- {
		if s.elem[i] != '\\' {
			return n
		}
		n++
	}
	for k := len(s.full) - 1; k >= 0; k-- {
		piece := s.full[k]
		for i := len(piece) - 1; i >= 0; i-- {
			if piece[i] != '\\' {
				return n
			}
			n++
		}
	}
	return n
}

// emit hands the current value to fn, or reports the value read past.
func (s *valueScanner) emit() error {
	if s.skip != "" {
		s.problem(s.start, s.startOff, fmt.Sprintf("the value starting at line %d (byte %d): %s", s.start, s.startOff, s.skip), true)
		s.skip, s.bs = "", 0
		s.index++
		s.state = stBetween
		return nil
	}
	data := s.elem
	if len(s.full) > 0 {
		data = make([]byte, 0, s.fullLen+len(s.elem))
		for _, piece := range s.full {
			data = append(data, piece...)
		}
		data = append(data, s.elem...)
		s.full, s.fullLen = nil, 0
		if len(data) > bigValue {
			// Collect the pieces now rather than when the heap next doubles:
			// on the 500 MB export benchmark (one 40 MB conversation) this
			// takes the peak RSS from about 185 MB to about 135 MB, for one
			// collection per value over 4 MB.
			runtime.GC()
		}
	}
	v := &jsonValue{Data: data, Index: s.index, Line: s.start, EndLine: s.line, Offset: s.startOff}
	data = nil
	s.index++
	s.state = stBetween
	return s.fn(v)
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\r' || c == '\n' }

// feed consumes one chunk.
func (s *valueScanner) feed(chunk []byte) error {
	i := 0
	for i < len(chunk) && !s.stop {
		var err error
		switch s.state {
		case stBetween:
			i = s.between(chunk, i)
		case stValue:
			i, err = s.inValue(chunk, i)
		case stString:
			i, err = s.inString(chunk, i)
		case stScalar:
			i, err = s.inScalar(chunk, i)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// between reads the byte at i between values: white space, the top-level
// array's brackets and commas, or the first byte of a value. It returns
// where to go on.
func (s *valueScanner) between(chunk []byte, i int) int {
	c := chunk[i]
	switch {
	case c == '\n':
		s.line++
	case isSpace(c):
	case !s.started && c == '[':
		s.started, s.array = true, true
	case s.array && !s.closed && c == ',':
	case s.array && !s.closed && c == ']':
		s.closed = true
	case s.closed:
		s.problem(s.line, s.off, "unexpected data after the top-level array; the rest of the file is ignored", true)
		s.stop = true
		return i
	case c == '}' || c == ']':
		s.problem(s.line, s.off, fmt.Sprintf("unexpected %q between values, skipped", c), true)
	default:
		s.started = true
		s.begin()
		s.addByte(c)
		switch c {
		case '{', '[':
			s.state, s.depth = stValue, 1
		case '"':
			s.state, s.depth = stString, 0
		default:
			s.state = stScalar
		}
	}
	s.off++
	return i + 1
}

// inValue reads an object or array from i up to and including the next
// byte that matters (a quote, a bracket, a newline).
func (s *valueScanner) inValue(chunk []byte, i int) (int, error) {
	j := i
	for j < len(chunk) {
		c := chunk[j]
		if c == '"' || c == '{' || c == '[' || c == '}' || c == ']' || c == '\n' {
			break
		}
		j++
	}
	s.add(chunk[i:j])
	s.off += int64(j - i)
	i = j
	if i == len(chunk) {
		return i, nil
	}
	c := chunk[i]
	s.addByte(c)
	i++
	s.off++
	switch c {
	case '"':
		s.state = stString
	case '{', '[':
		s.depth++
		if s.depth > s.maxDepth && s.skip == "" {
			s.startSkip(tooDeep("value", s.maxDepth))
		}
	case '}', ']':
		s.depth--
		if s.depth == 0 {
			return i, s.emit()
		}
	case '\n':
		s.line++
	}
	return i, nil
}

// inString reads a string from i up to its closing quote, or to the end
// of the chunk.
func (s *valueScanner) inString(chunk []byte, i int) (int, error) {
	rest := chunk[i:]
	k := bytes.IndexByte(rest, '"')
	if k < 0 {
		s.line += bytes.Count(rest, []byte{'\n'})
		s.add(rest)
		s.off += int64(len(rest))
		return len(chunk), nil
	}
	s.line += bytes.Count(rest[:k], []byte{'\n'})
	s.add(rest[:k])
	// The quote closes the string unless an odd run of backslashes
	// escapes it.
	bs := s.trailingBackslashes()
	s.addByte('"')
	i += k + 1
	s.off += int64(k + 1)
	if bs%2 == 0 {
		if s.depth == 0 {
			return i, s.emit()
		}
		s.state = stValue
	}
	return i, nil
}

// inScalar reads a number or literal up to its delimiter, which is left to
// be read between values.
func (s *valueScanner) inScalar(chunk []byte, i int) (int, error) {
	c := chunk[i]
	if isSpace(c) || c == ',' || c == ']' || c == '}' || c == '[' || c == '{' || c == '"' {
		return i, s.emit()
	}
	s.addByte(c)
	s.off++
	return i + 1, nil
}

// end handles the end of input.
func (s *valueScanner) end() error {
	if s.stop {
		return nil
	}
	switch s.state {
	case stScalar:
		return s.emit()
	case stValue, stString:
		reason := fmt.Sprintf("truncated: the value starting at line %d (byte %d) is incomplete", s.start, s.startOff)
		if s.skip != "" {
			reason += "; " + s.skip
		}
		s.problem(s.start, s.startOff, reason, true)
		return nil
	}
	if s.array && !s.closed {
		s.problem(s.line, s.off, "truncated: the top-level array is not closed", false)
	}
	return nil
}

// headShape describes the first value of a file's head, for sniffing.
type headShape struct {
	// Array says the document is a top-level array; the paths then describe
	// its first element.
	Array bool
	// Complete says the first element ends within the head.
	Complete bool
	// Paths holds the key paths met in the first element: "k" for its own
	// keys, "k.sub" inside an object value, "k[].sub" inside the first
	// object of an array value; at most six containers deep.
	Paths map[string]bool
}

// Has reports whether every path was met.
func (h headShape) Has(paths ...string) bool {
	for _, p := range paths {
		if !h.Paths[p] {
			return false
		}
	}
	return len(paths) > 0
}

// shapeOf reads the structure at the start of head without decoding it, so
// an element larger than the head still shows its first keys.
func shapeOf(head []byte) headShape {
	sc := shapeScan{h: headShape{Paths: map[string]bool{}}, head: head}
	i := 0
	for i < len(head) && isSpace(head[i]) {
		i++
	}
	if i < len(head) && head[i] == '[' {
		sc.h.Array = true
		i++
	}
	for ; i < len(head); i++ {
		var done bool
		switch c := head[i]; {
		case isSpace(c), c == ':':
		case c == '"':
			i, done = sc.str(i)
		case c == '{' || c == '[':
			done = sc.open(c)
		case c == '}' || c == ']':
			done = sc.close()
		case c == ',':
			done = sc.comma()
		default:
			// A scalar element ends the first element; a scalar inside it
			// changes nothing.
			done = sc.atRoot()
		}
		if done {
			break
		}
	}
	return sc.h
}

// shapeScan is the state of shapeOf: the containers open at the byte read.
type shapeScan struct {
	h     headShape
	head  []byte
	stack []shapeFrame
}

// shapeFrame is a container open in shapeScan.
type shapeFrame struct {
	array     bool
	prefix    string // path of this container
	expectKey bool   // object: the next string is a key
	item      int    // array: index of the current item
	first     bool   // every enclosing array is at its first item
	key       string // object: the last key read
}

// atRoot reports whether no container is open (a value read now is a whole
// element, which completes the head's first one), and marks it complete.
func (sc *shapeScan) atRoot() bool {
	if len(sc.stack) == 0 {
		sc.h.Complete = true
		return true
	}
	return false
}

// childPrefix is the path of a value placed in the top frame, and whether
// it lies in the first item of every enclosing array.
func (sc *shapeScan) childPrefix() (string, bool) {
	if len(sc.stack) == 0 {
		return "", true
	}
	f := sc.stack[len(sc.stack)-1]
	if f.array {
		return f.prefix + "[]", f.first && f.item == 0
	}
	if f.prefix == "" {
		return f.key, f.first
	}
	return f.prefix + "." + f.key, f.first
}

// str reads the string opening at i: an object's key is recorded (at most
// six containers deep). It returns the string's last byte, and true when
// the scan is done (the string is cut short, or is a whole element).
func (sc *shapeScan) str(i int) (int, bool) {
	head := sc.head
	j := i + 1
	for j < len(head) {
		if head[j] == '\\' {
			j += 2
			continue
		}
		if head[j] == '"' {
			break
		}
		j++
	}
	if j >= len(head) {
		return j, true
	}
	n := len(sc.stack)
	if n == 0 || sc.stack[n-1].array || !sc.stack[n-1].expectKey {
		return j, sc.atRoot()
	}
	f := &sc.stack[n-1]
	f.key = string(head[i+1 : j])
	f.expectKey = false
	if f.first && n <= 6 {
		if f.prefix == "" {
			sc.h.Paths[f.key] = true
		} else {
			sc.h.Paths[f.prefix+"."+f.key] = true
		}
	}
	return j, false
}

// open opens a container; it reports true when the nesting is too deep
// for any parser to read.
func (sc *shapeScan) open(c byte) bool {
	if len(sc.stack) >= 6 {
		// Deeper containers record no path: build none, so that the
		// cost stays linear in the nesting (a head of 64 KiB of "["
		// would otherwise build 64 Ki prefixes of up to 128 KiB).
		if len(sc.stack) >= MaxDepthCeiling {
			return true // no parser reads it anyway
		}
		sc.stack = append(sc.stack, shapeFrame{array: c == '[', expectKey: c == '{'})
		return false
	}
	p, first := sc.childPrefix()
	sc.stack = append(sc.stack, shapeFrame{array: c == '[', prefix: p, expectKey: c == '{', first: first})
	return false
}

// close closes a container; closing the first element completes it, and
// closing none (the top-level array, or junk) ends the scan.
func (sc *shapeScan) close() bool {
	if len(sc.stack) == 0 {
		return true
	}
	sc.stack = sc.stack[:len(sc.stack)-1]
	return sc.atRoot()
}

// comma moves to the next item or key; at the top level it ends the scan.
func (sc *shapeScan) comma() bool {
	n := len(sc.stack)
	if n == 0 {
		return true
	}
	if sc.stack[n-1].array {
		sc.stack[n-1].item++
	} else {
		sc.stack[n-1].expectKey = true
	}
	return false
}

// jsonField is one member of a JSON object: its key, its value's text, and
// the byte offset of that text in the object's text.
type jsonField struct {
	Key    string
	Value  []byte
	Offset int
}

// splitObject splits the text of an object into its members without
// decoding their values, so that a reader can parse a large member piece by
// piece. It fails when data is not one well-formed object at this level (the
// values themselves are only delimited, not checked).
func splitObject(data []byte) ([]jsonField, error) {
	i := skipSpace(data, 0)
	if i >= len(data) || data[i] != '{' {
		return nil, errors.New("not an object")
	}
	var out []jsonField
	i = skipSpace(data, i+1)
	if i < len(data) && data[i] == '}' {
		i++
	} else {
		for {
			i = skipSpace(data, i)
			if i >= len(data) || data[i] != '"' {
				return nil, fmt.Errorf("expected a key at byte %d", i)
			}
			end, err := skipString(data, i)
			if err != nil {
				return nil, err
			}
			key := string(data[i+1 : end-1])
			if strings.IndexByte(key, '\\') >= 0 {
				if err := json.Unmarshal(data[i:end], &key); err != nil {
					return nil, fmt.Errorf("bad key at byte %d: %w", i, err)
				}
			}
			i = skipSpace(data, end)
			if i >= len(data) || data[i] != ':' {
				return nil, fmt.Errorf("expected ':' at byte %d", i)
			}
			i = skipSpace(data, i+1)
			vend, err := skipValue(data, i)
			if err != nil {
				return nil, err
			}
			out = append(out, jsonField{Key: key, Value: data[i:vend], Offset: i})
			i = skipSpace(data, vend)
			if i < len(data) && data[i] == ',' {
				i++
				continue
			}
			if i < len(data) && data[i] == '}' {
				i++
				break
			}
			return nil, fmt.Errorf("expected ',' or '}' at byte %d", i)
		}
	}
	if skipSpace(data, i) != len(data) {
		return nil, fmt.Errorf("unexpected data after the object at byte %d", i)
	}
	return out, nil
}

func skipSpace(data []byte, i int) int {
	for i < len(data) && isSpace(data[i]) {
		i++
	}
	return i
}

// skipString returns the index after the string that starts at data[i].
func skipString(data []byte, i int) (int, error) {
	j := i + 1
	for {
		k := bytes.IndexByte(data[j:], '"')
		if k < 0 {
			return 0, fmt.Errorf("unterminated string at byte %d", i)
		}
		q := j + k
		bs := 0
		for p := q - 1; p > i && data[p] == '\\'; p-- {
			bs++
		}
		if bs%2 == 0 {
			return q + 1, nil
		}
		j = q + 1
	}
}

// skipValue returns the index after the value that starts at data[i].
func skipValue(data []byte, i int) (int, error) {
	if i >= len(data) {
		return 0, fmt.Errorf("missing value at byte %d", i)
	}
	switch data[i] {
	case '"':
		return skipString(data, i)
	case '{', '[':
		depth := 0
		for j := i; j < len(data); j++ {
			switch data[j] {
			case '"':
				end, err := skipString(data, j)
				if err != nil {
					return 0, err
				}
				j = end - 1
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return j + 1, nil
				}
			}
		}
		return 0, fmt.Errorf("unterminated value at byte %d", i)
	case '}', ']', ',', ':':
		return 0, fmt.Errorf("missing value at byte %d", i)
	}
	j := i
	for j < len(data) && !isSpace(data[j]) && data[j] != ',' && data[j] != '}' && data[j] != ']' {
		j++
	}
	return j, nil
}

// splitArray calls fn with the index, the byte offset in data and the text
// of each element of the array in data, without copying or decoding them. It
// fails when data is not one well-formed array at this level.
func splitArray(data []byte, fn func(i, off int, elem []byte)) error {
	i := skipSpace(data, 0)
	if i >= len(data) || data[i] != '[' {
		return errors.New("not an array")
	}
	i = skipSpace(data, i+1)
	if i < len(data) && data[i] == ']' {
		i++
	} else {
		for n := 0; ; n++ {
			i = skipSpace(data, i)
			end, err := skipValue(data, i)
			if err != nil {
				return err
			}
			fn(n, i, data[i:end])
			i = skipSpace(data, end)
			if i < len(data) && data[i] == ',' {
				i++
				continue
			}
			if i < len(data) && data[i] == ']' {
				i++
				break
			}
			return fmt.Errorf("expected ',' or ']' at byte %d", i)
		}
	}
	if skipSpace(data, i) != len(data) {
		return fmt.Errorf("unexpected data after the array at byte %d", i)
	}
	return nil
}
