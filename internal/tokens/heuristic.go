package tokens

import "github.com/compactbench/compactbench/internal/transcript"

// utf16Len is the length of s in UTF-16 code units, JavaScript's
// String.length: one per rune, two for runes outside the Basic Multilingual
// Plane. s is UTF-8; a byte that is not a continuation byte starts a rune,
// and a 4-byte lead byte starts a rune that needs a surrogate pair.
func utf16Len(s string) int {
	n := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c&0xC0 != 0x80 {
			n++
			if c >= 0xF0 {
				n++
			}
		}
	}
	return n
}

// jsonStringLen is the UTF-16 length of JSON.stringify(s): the quotes, two
// characters for \" \\ \b \f \n \r \t, six for other control characters, and
// the characters themselves otherwise.
func jsonStringLen(s string) int {
	n := 2
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '"' || c == '\\' || c == '\b' || c == '\f' || c == '\n' || c == '\r' || c == '\t':
			n += 2
		case c < 0x20:
			n += 6
		case c&0xC0 != 0x80:
			n++
			if c >= 0xF0 {
				n++
			}
		}
	}
	return n
}

// ceil4 is ceil(n/4) for n >= 0.
func ceil4(n int) int { return (n + 3) / 4 }

// chars4 is seed 004's estimateTokens applied to each block's text.
type chars4 struct{}

func (chars4) message() int { return 0 }

func (chars4) block(b *transcript.Block) int {
	switch b.Kind {
	case transcript.BlockToolUse:
		return ceil4(utf16Len(b.ToolName) + utf16Len(b.Input))
	case transcript.BlockImage:
		return 0
	}
	return ceil4(utf16Len(b.Text))
}

// chars4msg is seed 004's estimateMessagesTokens.
type chars4msg struct{}

func (chars4msg) message() int { return 2 }

func (chars4msg) block(b *transcript.Block) int {
	switch b.Kind {
	case transcript.BlockText, transcript.BlockInjected:
		return ceil4(utf16Len(b.Text))
	case transcript.BlockToolUse:
		return ceil4(utf16Len(b.ToolName)) + ceil4(utf16Len(b.Input))
	case transcript.BlockToolResult:
		return ceil4(jsonStringLen(b.Text))
	}
	return 0
}
