package gen

import "strconv"

// The generator writes JSON by appending to byte slices: encoding/json with
// maps would cost an order of magnitude more and would not fix the key
// order, which real files have and tests compare.

const hexDigits = "0123456789abcdef"

// noEscape[c] is true for bytes that go into a JSON string as they are.
var noEscape = func() (t [256]bool) {
	for c := 0x20; c < 256; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

// appendStr appends s as a quoted JSON string. Multi-byte UTF-8 passes
// through unchanged, as Claude Code writes it; every text the generator
// writes is valid UTF-8 by construction (string literals, and clip cuts on
// rune boundaries), which the loader tests confirm.
func appendStr(b []byte, s string) []byte {
	b = append(b, '"')
	b = appendEscaped(b, s)
	return append(b, '"')
}

// appendEscaped appends the escaped body of a JSON string, without quotes.
func appendEscaped(b []byte, s string) []byte {
	start := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if noEscape[c] {
			continue
		}
		b = append(b, s[start:i]...)
		switch c {
		case '"':
			b = append(b, '\\', '"')
		case '\\':
			b = append(b, '\\', '\\')
		case '\n':
			b = append(b, '\\', 'n')
		case '\r':
			b = append(b, '\\', 'r')
		case '\t':
			b = append(b, '\\', 't')
		default:
			b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
		}
		start = i + 1
	}
	return append(b, s[start:]...)
}

// appendKey appends `"key":` (key must need no escaping), preceded by a comma
// unless the previous byte opens an object.
func appendKey(b []byte, key string) []byte {
	if n := len(b); n > 0 && b[n-1] != '{' && b[n-1] != '[' {
		b = append(b, ',')
	}
	b = append(b, '"')
	b = append(b, key...)
	return append(b, '"', ':')
}

// Field appenders: each appends `,"key":value` (or without the comma right
// after an opening brace).

func kvStr(b []byte, key, v string) []byte { return appendStr(appendKey(b, key), v) }

func kvInt(b []byte, key string, v int64) []byte {
	return strconv.AppendInt(appendKey(b, key), v, 10)
}

func kvBool(b []byte, key string, v bool) []byte {
	return strconv.AppendBool(appendKey(b, key), v)
}

// kvRaw appends a value that is already JSON.
func kvRaw(b []byte, key string, raw []byte) []byte { return append(appendKey(b, key), raw...) }

// kvNull appends `"key":null`.
func kvNull(b []byte, key string) []byte { return append(appendKey(b, key), "null"...) }

// kvStrOrNull appends a string, or null when it is empty.
func kvStrOrNull(b []byte, key, v string) []byte {
	if v == "" {
		return kvNull(b, key)
	}
	return kvStr(b, key, v)
}

// appendStrArray appends a JSON array of strings.
func appendStrArray(b []byte, items []string) []byte {
	b = append(b, '[')
	for i, s := range items {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendStr(b, s)
	}
	return append(b, ']')
}
