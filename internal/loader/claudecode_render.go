package loader

import (
	"bytes"
	"encoding/binary"
	"strconv"
	"unicode/utf8"

	"github.com/valyala/fastjson"
)

// renderJSON appends the JSON of v exactly as marshal does (every string
// decoded, then quoted as fastjson quotes a decoded string), but copies a
// string's text as it was written when quoting its decoded text would give
// those bytes back: a tool's input (file contents, edits, commands) is then
// neither decoded nor quoted again, the two passes marshal makes over it.
func renderJSON(dst []byte, v *fastjson.Value) []byte {
	if o := v.GetObject(); o != nil {
		dst = append(dst, '{')
		first := true
		o.Visit(func(k []byte, x *fastjson.Value) {
			if !first {
				dst = append(dst, ',')
			}
			first = false
			dst = quoteJSON(dst, k)
			dst = append(dst, ':')
			dst = renderJSON(dst, x)
		})
		return append(dst, '}')
	}
	if a := v.GetArray(); a != nil {
		dst = append(dst, '[')
		for i, x := range a {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = renderJSON(dst, x)
		}
		return append(dst, ']')
	}
	// GetObject and GetArray leave a string undecoded; MarshalTo writes an
	// undecoded string as it was written, and a decoded one as marshal
	// quotes it (so either way its output is right when it is kept).
	start := len(dst)
	dst = v.MarshalTo(dst)
	if len(dst)-start < 2 || dst[start] != '"' || requotesAsWritten(dst[start+1:len(dst)-1]) {
		return dst // a number or literal, or a string that quotes back as written
	}
	return quoteJSON(dst[:start], v.GetStringBytes())
}

// requotesAsWritten reports whether raw, the text of a JSON string between
// its quotes, is what quoteJSON makes of the string it decodes to. It is
// when raw has no escape and no control character (decoded, it is raw, which
// quoteJSON keeps as it is), or when raw holds only printable characters
// (strconv.IsPrint, DEL excepted) and escapes quoteJSON writes the same way
// (\" \\ \b \f \n \r \t). Raw text with a \u escape or "\/" is reported
// false, though some of it would quote back: marshal's way is then taken.
func requotesAsWritten(raw []byte) bool {
	if bytes.IndexByte(raw, '\\') < 0 {
		return !hasControl(raw)
	}
	if !printable(raw) {
		return false
	}
	for i := 0; ; {
		j := bytes.IndexByte(raw[i:], '\\')
		if j < 0 {
			return true
		}
		i += j
		if i+1 >= len(raw) {
			return false
		}
		switch raw[i+1] {
		case '"', '\\', 'b', 'f', 'n', 'r', 't':
			i += 2
		default:
			return false
		}
	}
}

// SWAR masks: a one and a high bit in each byte of a word.
const (
	ones  = 0x0101010101010101
	highs = 0x8080808080808080
)

// hasControl reports whether s holds a byte below 0x20. Eight bytes are
// tested at a time.
func hasControl(s []byte) bool {
	i := 0
	for ; i+8 <= len(s); i += 8 {
		if w := binary.LittleEndian.Uint64(s[i:]); (w-0x20*ones)&^w&highs != 0 {
			return true
		}
	}
	for _, c := range s[i:] {
		if c < 0x20 {
			return true
		}
	}
	return false
}

// printable reports whether s is UTF-8 whose characters quoteJSON keeps as
// they are: ASCII from space to '~', and runes strconv.IsPrint accepts.
// Eight ASCII bytes are tested at a time.
func printable(s []byte) bool {
	for i := 0; i < len(s); {
		if i+8 <= len(s) {
			w := binary.LittleEndian.Uint64(s[i:])
			// No byte below 0x20, and none above 0x7e (adding one sets the
			// high bit of 0x7f; a byte past ASCII has it set already).
			if (w-0x20*ones)&^w&highs == 0 && (w+ones|w)&highs == 0 {
				i += 8
				continue
			}
		}
		c := s[i]
		if c < 0x80 {
			if c < 0x20 || c == 0x7f {
				return false
			}
			i++
			continue
		}
		r, n := utf8.DecodeRune(s[i:])
		if n == 1 || !strconv.IsPrint(r) {
			return false
		}
		i += n
	}
	return true
}
