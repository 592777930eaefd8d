package loader

import "bytes"

// This file locates records inside a JSON document, so that messages and
// problems of the document formats carry the text line of the record that
// produced them (a pretty-printed export spans one line per field; a
// compact one is a single line, and every record is then on line 1).

// lineIndex turns byte offsets in a value's text into 1-based file lines.
// Offsets must be asked for in increasing order: each call counts only the
// newlines since the previous one, so locating every element of a value
// costs one pass over its text.
type lineIndex struct {
	data []byte
	off  int
	line int
}

// newLineIndex indexes data, whose first byte is on line first.
func newLineIndex(data []byte, first int) *lineIndex {
	return &lineIndex{data: data, line: first}
}

// at returns the line of the byte at off. An offset before the previous
// one returns the previous line.
func (x *lineIndex) at(off int) int {
	off = min(off, len(x.data))
	if off > x.off {
		x.line += bytes.Count(x.data[x.off:off], []byte{'\n'})
		x.off = off
	}
	return x.line
}

// elementLines returns the line of the first byte of each of the n
// elements of an array in data, a value whose first byte is on line first:
// data itself when key is "", else the first member of data named key (the
// one fastjson's Get returns). It returns nil when data is a single line,
// or does not split that way, or the array does not hold n elements;
// callers then fall back to the line of data (lineOf).
func elementLines(data []byte, first int, key string, n int) []int {
	if bytes.IndexByte(data, '\n') < 0 {
		return nil // every element is on line first
	}
	arr, base := data, 0
	if key != "" {
		fields, err := splitObject(data)
		if err != nil {
			return nil
		}
		found := false
		for _, f := range fields {
			if f.Key == key {
				arr, base, found = f.Value, f.Offset, true
				break
			}
		}
		if !found {
			return nil
		}
	}
	x := newLineIndex(data, first)
	lines := make([]int, 0, n)
	if err := splitArray(arr, func(_, off int, _ []byte) { lines = append(lines, x.at(base+off)) }); err != nil || len(lines) != n {
		return nil
	}
	return lines
}

// lineOf returns lines[i], or def when lines does not cover i.
func lineOf(lines []int, i, def int) int {
	if i < len(lines) {
		return lines[i]
	}
	return def
}
