package tokens

import (
	"strings"
	"testing"

	"github.com/compactbench/compactbench/internal/transcript"
)

func TestUTF16Len(t *testing.T) {
	for _, tc := range []struct {
		s    string
		want int
	}{
		{"", 0},
		{"abcd", 4},
		{"é", 1},      // 2 bytes, 1 unit
		{"你好", 2},     // 3 bytes each, 1 unit each
		{"👋", 2},      // 4 bytes, surrogate pair
		{"a👋🏽b", 6},   // a + (2) + skin tone modifier (2) + b
		{"\n\t\"", 3}, // controls count as themselves
		{"naïve café", 10},
	} {
		if got := utf16Len(tc.s); got != tc.want {
			t.Errorf("utf16Len(%q) = %d, want %d", tc.s, got, tc.want)
		}
	}
}

func TestJSONStringLen(t *testing.T) {
	// Lengths of JSON.stringify(s) in JavaScript, counted by hand.
	for _, tc := range []struct {
		s    string
		want int
	}{
		{"", 2},            // ""
		{"ok", 4},          // "ok"
		{"a\"b", 6},        // "a\"b"
		{"a\\b", 6},        // "a\\b"
		{"line\nnext", 12}, // "line\nnext": 1+4+2+4+1
		{"\x01", 8},        // "\u0001"
		{"é👋", 5},          // "é👋": 1 + 2 + quotes
		{"tab\there", 11},
	} {
		if got := jsonStringLen(tc.s); got != tc.want {
			t.Errorf("jsonStringLen(%q) = %d, want %d", tc.s, got, tc.want)
		}
	}
}

// utf16LenByByte and jsonStringLenByByte are the lengths one byte at a
// time, the definitions the word-at-a-time versions must match on any input
// (invalid UTF-8 included).
func utf16LenByByte(s string) int {
	n := 0
	for i := 0; i < len(s); i++ {
		if c := s[i]; c&0xC0 != 0x80 {
			n++
			if c >= 0xF0 {
				n++
			}
		}
	}
	return n
}

func jsonStringLenByByte(s string) int {
	n := 2
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
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

// lengthSeeds put every byte value and the bytes next to the fast paths'
// thresholds at every position of a word.
func lengthSeeds() []string {
	seeds := []string{"", "plain ascii words, longer than eight", "naïve café 你好 👋🏽 ok", "a\"b\\c\n\t\x01\x1f\x7f end!",
		"\xff\xfe\x80\xbf\xc0\xf0\xf7\xf8 invalid UTF-8", strings.Repeat("0123456789abcdef", 5)}
	var all []byte
	for c := 0; c < 256; c++ {
		all = append(all, byte(c))
	}
	seeds = append(seeds, string(all))
	for _, c := range []byte{0x00, 0x1f, 0x20, 0x21, '"', '#', '[', '\\', ']', 0x7f, 0x80, 0xbf, 0xc0, 0xef, 0xf0, 0xff} {
		for pos := 0; pos < 9; pos++ {
			b := []byte(strings.Repeat("x", 17))
			b[pos] = c
			seeds = append(seeds, string(b))
		}
	}
	return seeds
}

func TestLengthsMatchByteByByte(t *testing.T) {
	for _, s := range lengthSeeds() {
		if got, want := utf16Len(s), utf16LenByByte(s); got != want {
			t.Errorf("utf16Len(%q) = %d, want %d", s, got, want)
		}
		if got, want := jsonStringLen(s), jsonStringLenByByte(s); got != want {
			t.Errorf("jsonStringLen(%q) = %d, want %d", s, got, want)
		}
		if u, j := utf16JSONLen(s); u != utf16LenByByte(s) || j != jsonStringLenByByte(s) {
			t.Errorf("utf16JSONLen(%q) = %d, %d, want %d, %d", s, u, j, utf16LenByByte(s), jsonStringLenByByte(s))
		}
	}
}

func FuzzLengths(f *testing.F) {
	for _, s := range lengthSeeds() {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := utf16Len(s), utf16LenByByte(s); got != want {
			t.Fatalf("utf16Len(%q) = %d, want %d", s, got, want)
		}
		if got, want := jsonStringLen(s), jsonStringLenByByte(s); got != want {
			t.Fatalf("jsonStringLen(%q) = %d, want %d", s, got, want)
		}
		if u, j := utf16JSONLen(s); u != utf16LenByByte(s) || j != jsonStringLenByByte(s) {
			t.Fatalf("utf16JSONLen(%q) = %d, %d, want %d, %d", s, u, j, utf16LenByByte(s), jsonStringLenByByte(s))
		}
		for _, k := range []transcript.BlockKind{transcript.BlockText, transcript.BlockInjected, transcript.BlockThinking,
			transcript.BlockToolUse, transcript.BlockToolResult, transcript.BlockImage} {
			b := transcript.Block{Kind: k, Text: s, ToolName: s[:len(s)/3], Input: s[len(s)/3:]}
			if a, m := chars4Pair(&b); a != (chars4{}).block(&b) || m != (chars4msg{}).block(&b) {
				t.Fatalf("chars4Pair(kind %v, %q) = %d, %d, want %d, %d", k, s, a, m, (chars4{}).block(&b), (chars4msg{}).block(&b))
			}
		}
	})
}

func TestHeuristicBlocks(t *testing.T) {
	c4, _ := ByName(Chars4)
	c4m, _ := ByName(Chars4Msg)
	for _, tc := range []struct {
		name          string
		b             transcript.Block
		chars4, c4msg int
	}{
		{"empty text", transcript.Block{Kind: transcript.BlockText}, 0, 0},
		{"text 5 chars", transcript.Block{Kind: transcript.BlockText, Text: "hello"}, 2, 2},
		{"text 8 chars", transcript.Block{Kind: transcript.BlockText, Text: "12345678"}, 2, 2},
		{"emoji counts two units", transcript.Block{Kind: transcript.BlockText, Text: "👋👋👋"}, 2, 2},
		// chars4: ceil((4+16)/4)=5; chars4msg: ceil(4/4)+ceil(16/4)=1+4
		{"tool_use", transcript.Block{Kind: transcript.BlockToolUse, ToolName: "Bash", Input: `{"command":"ls"}`}, 5, 5},
		// name 5 → 2, input 2 → 1 (chars4msg); chars4: ceil(7/4)=2
		{"tool_use separate ceilings", transcript.Block{Kind: transcript.BlockToolUse, ToolName: "Write", Input: `{}`}, 2, 3},
		// chars4: ceil(9/4)=3; chars4msg: JSON "a\nb\"c" → 2+1+2+1+2+1... = "a\nb\"cdef" → 2+1+2+1+2+4=12 → 3
		{"tool_result escapes", transcript.Block{Kind: transcript.BlockToolResult, Text: "a\nb\"cdef"}, 2, 3},
		{"empty tool_result is two quotes", transcript.Block{Kind: transcript.BlockToolResult}, 0, 1},
		{"thinking text", transcript.Block{Kind: transcript.BlockThinking, Text: "think hard", SignatureLen: 400}, 3, 0},
		{"encrypted thinking", transcript.Block{Kind: transcript.BlockThinking, SignatureLen: 20000}, 0, 0},
		{"image", transcript.Block{Kind: transcript.BlockImage, Images: 1, ImageBytes: 100000}, 0, 0},
		{"injected", transcript.Block{Kind: transcript.BlockInjected, Text: "reminder", InjectedKind: "todo_reminder"}, 2, 2},
	} {
		b := tc.b
		if got := c4.Uncached().Block(&b); got != tc.chars4 {
			t.Errorf("%s: chars4 = %d, want %d", tc.name, got, tc.chars4)
		}
		if got := c4m.Uncached().Block(&b); got != tc.c4msg {
			t.Errorf("%s: chars4msg = %d, want %d", tc.name, got, tc.c4msg)
		}
	}
}

func TestHeuristicMessages(t *testing.T) {
	msgs := []transcript.Message{
		{Role: transcript.RoleUser, Blocks: []transcript.Block{{Kind: transcript.BlockText, Text: "fix the bug"}}}, // 11 → 3
		{Role: transcript.RoleAssistant, Blocks: []transcript.Block{
			{Kind: transcript.BlockText, Text: "ok"},                                          // 1
			{Kind: transcript.BlockToolUse, ToolName: "Read", Input: `{"file_path":"/a.go"}`}, // name 1, input 21 → 6; chars4: 25 → 7
		}},
		{Role: transcript.RoleTool, Blocks: []transcript.Block{{Kind: transcript.BlockToolResult, Text: "package a"}}}, // 9 → 3; json 11 → 3
	}
	c4, _ := ByName(Chars4)
	c4m, _ := ByName(Chars4Msg)
	if got, want := c4.Uncached().Context(msgs), 3+1+7+3; got != want {
		t.Errorf("chars4 context = %d, want %d", got, want)
	}
	if got, want := c4m.Uncached().Context(msgs), (2+3)+(2+1+1+6)+(2+3); got != want {
		t.Errorf("chars4msg context = %d, want %d", got, want)
	}
}
