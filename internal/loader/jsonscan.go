package loader

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
)

// jsonValue is one value found by scanValues: an element of a top-level
// array, or a top-level value itself (a single JSON document, or one value of
// a sequence such as JSON lines).
type jsonValue struct {
	// Data is the value's text; it is only valid during the callback.
	Data []byte
	// Index is the value's 0-based position among the values.
	Index int
	// Line and EndLine are the 1-based lines of its first and last byte.
	Line, EndLine int
	// Offset is the byte offset of its first byte.
	Offset int64
}

// scanProblem is structure scanValues could not split into values.
type scanProblem struct {
	Line   int
	Offset int64
	Reason string
}

// scanChunk is how much scanValues reads at a time.
const scanChunk = 256 << 10

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
	fn       func(jsonValue) error
	elem     []byte
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
}

// scanValues reads r and calls fn with each value: the elements of a
// top-level array, or else each top-level value in turn (one for a JSON
// document, one per line for JSON lines). It reports whether the document was
// an array, the structural problems met (a truncated value, data after the
// array, a read error), and fn's error, which stops the scan.
//
// Values are split by bracket depth only; whether each is valid JSON is for
// the caller's parser to say, so one malformed element costs only itself.
func scanValues(r io.Reader, fn func(jsonValue) error) (array bool, problems []scanProblem, err error) {
	s := &valueScanner{fn: fn, line: 1}
	// A small bufio.Reader finds a UTF-8 byte-order mark; reads larger than
	// its buffer then go straight to r.
	br := bufio.NewReaderSize(r, 16)
	if bom, _ := br.Peek(3); bytes.Equal(bom, []byte("\xef\xbb\xbf")) {
		br.Discard(3)
		s.off = 3
	}
	buf := make([]byte, scanChunk)
	for !s.stop {
		n, rerr := br.Read(buf)
		if err := s.feed(buf[:n]); err != nil {
			return s.array, s.problems, err
		}
		if rerr != nil {
			if !errors.Is(rerr, io.EOF) && !s.stop {
				s.problem(s.line, s.off, fmt.Sprintf("read error: %v", rerr))
			}
			break
		}
	}
	if err := s.end(); err != nil {
		return s.array, s.problems, err
	}
	return s.array, s.problems, nil
}

func (s *valueScanner) problem(line int, off int64, reason string) {
	s.problems = append(s.problems, scanProblem{Line: line, Offset: off, Reason: reason})
}

// begin starts a value at the current position.
func (s *valueScanner) begin() {
	s.elem = s.elem[:0]
	s.start, s.startOff = s.line, s.off
}

// emit hands the current value to fn.
func (s *valueScanner) emit() error {
	v := jsonValue{Data: s.elem, Index: s.index, Line: s.start, EndLine: s.line, Offset: s.startOff}
	s.index++
	s.state = stBetween
	return s.fn(v)
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\r' || c == '\n' }

// feed consumes one chunk.
func (s *valueScanner) feed(chunk []byte) error {
	i := 0
	for i < len(chunk) && !s.stop {
		switch s.state {
		case stBetween:
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
				s.problem(s.line, s.off, "unexpected data after the top-level array; the rest of the file is ignored")
				s.stop = true
				return nil
			case c == '}' || c == ']':
				s.problem(s.line, s.off, fmt.Sprintf("unexpected %q between values, skipped", c))
			default:
				s.started = true
				s.begin()
				s.elem = append(s.elem, c)
				switch c {
				case '{', '[':
					s.state, s.depth = stValue, 1
				case '"':
					s.state, s.depth = stString, 0
				default:
					s.state = stScalar
				}
			}
			i++
			s.off++
		case stValue:
			j := i
			for j < len(chunk) {
				c := chunk[j]
				if c == '"' || c == '{' || c == '[' || c == '}' || c == ']' || c == '\n' {
					break
				}
				j++
			}
			s.elem = append(s.elem, chunk[i:j]...)
			s.off += int64(j - i)
			i = j
			if i == len(chunk) {
				break
			}
			c := chunk[i]
			s.elem = append(s.elem, c)
			i++
			s.off++
			switch c {
			case '"':
				s.state = stString
			case '{', '[':
				s.depth++
			case '}', ']':
				s.depth--
				if s.depth == 0 {
					if err := s.emit(); err != nil {
						return err
					}
				}
			case '\n':
				s.line++
			}
		case stString:
			rest := chunk[i:]
			k := bytes.IndexByte(rest, '"')
			if k < 0 {
				s.line += bytes.Count(rest, []byte{'\n'})
				s.elem = append(s.elem, rest...)
				s.off += int64(len(rest))
				i = len(chunk)
				break
			}
			s.line += bytes.Count(rest[:k], []byte{'\n'})
			s.elem = append(s.elem, rest[:k]...)
			// The quote closes the string unless an odd run of backslashes
			// escapes it.
			bs := 0
			for p := len(s.elem) - 1; p >= 0 && s.elem[p] == '\\'; p-- {
				bs++
			}
			s.elem = append(s.elem, '"')
			i += k + 1
			s.off += int64(k + 1)
			if bs%2 == 0 {
				if s.depth == 0 {
					if err := s.emit(); err != nil {
						return err
					}
				} else {
					s.state = stValue
				}
			}
		case stScalar:
			c := chunk[i]
			if isSpace(c) || c == ',' || c == ']' || c == '}' || c == '[' || c == '{' || c == '"' {
				if err := s.emit(); err != nil {
					return err
				}
				continue // the delimiter is read between values
			}
			s.elem = append(s.elem, c)
			i++
			s.off++
		}
	}
	return nil
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
		s.problem(s.start, s.startOff, fmt.Sprintf("truncated: the value starting at line %d (byte %d) is incomplete", s.start, s.startOff))
		return nil
	}
	if s.array && !s.closed {
		s.problem(s.line, s.off, "truncated: the top-level array is not closed")
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
	h := headShape{Paths: map[string]bool{}}
	type frame struct {
		array     bool
		prefix    string // path of this container
		expectKey bool   // object: the next string is a key
		item      int    // array: index of the current item
		first     bool   // every enclosing array is at its first item
		key       string // object: the last key read
	}
	var stack []frame
	i := 0
	for i < len(head) && isSpace(head[i]) {
		i++
	}
	if i < len(head) && head[i] == '[' {
		h.Array = true
		i++
	}
	rootDepth := 0
	// childPrefix is the path of a value placed in the top frame.
	childPrefix := func() (string, bool) {
		if len(stack) == 0 {
			return "", true
		}
		f := stack[len(stack)-1]
		if f.array {
			p := f.prefix + "[]"
			return p, f.first && f.item == 0
		}
		if f.prefix == "" {
			return f.key, f.first
		}
		return f.prefix + "." + f.key, f.first
	}
	for ; i < len(head); i++ {
		c := head[i]
		switch {
		case isSpace(c):
			continue
		case c == '"':
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
				return h
			}
			if n := len(stack); n > 0 && !stack[n-1].array && stack[n-1].expectKey {
				f := &stack[n-1]
				f.key = string(head[i+1 : j])
				f.expectKey = false
				if f.first && n <= 6 {
					if f.prefix == "" {
						h.Paths[f.key] = true
					} else {
						h.Paths[f.prefix+"."+f.key] = true
					}
				}
			} else if len(stack) == rootDepth {
				h.Complete = true // a top-level string
				return h
			}
			i = j
		case c == '{' || c == '[':
			p, first := childPrefix()
			stack = append(stack, frame{array: c == '[', prefix: p, expectKey: c == '{', first: first})
		case c == '}' || c == ']':
			if len(stack) == 0 {
				return h // the top-level array closed, or junk
			}
			stack = stack[:len(stack)-1]
			if len(stack) == rootDepth {
				h.Complete = true
				return h
			}
		case c == ',':
			if n := len(stack); n > 0 {
				if stack[n-1].array {
					stack[n-1].item++
				} else {
					stack[n-1].expectKey = true
				}
			} else {
				return h
			}
		case c == ':':
		default:
			if len(stack) == rootDepth {
				h.Complete = true // a scalar element
				return h
			}
		}
	}
	return h
}
