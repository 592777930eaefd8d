package tokens

import (
	"math"
	"strings"
	"testing"

	"github.com/compactbench/compactbench/internal/transcript"
)

func TestTopLevelKeys(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want int
	}{
		{``, 0},
		{`{}`, 0},
		{`{"command":"ls"}`, 1},
		{`{"command":"ls","description":"list"}`, 2},
		{`{"a":{"b":1,"c":2},"d":[{"e":1}]}`, 2},
		{`{"text":"a \"quoted\", comma: {x}","n":1}`, 2},
		{`{"path":"C:\\dir\\","x":1}`, 2},
		{`[1,2,3]`, 0},
		{`"just a string"`, 0},
		{`{ "spaced" : 1 , "b" : 2 }`, 2},
	} {
		if got := topLevelKeys(tc.in); got != tc.want {
			t.Errorf("topLevelKeys(%s) = %d, want %d", tc.in, got, tc.want)
		}
	}
}

func TestCalibratedBlocks(t *testing.T) {
	f := &Factors{Prose: 0.25, Injected: 0.5, Thinking: 0.3, Signature: 0.2, ToolInput: 0.4, ToolOutput: 0.3,
		Message: 3.4, ToolCall: 10, ToolParam: 7, ToolResult: 2, Image: 1500}
	r := NewCalibrated(f).Uncached()
	for _, tc := range []struct {
		name string
		b    transcript.Block
		want int
	}{
		{"text 10 bytes", transcript.Block{Kind: transcript.BlockText, Text: "0123456789"}, 3}, // 2.5 → 3
		{"text counts bytes", transcript.Block{Kind: transcript.BlockText, Text: "你好"}, 2},     // 6 bytes → 1.5 → 2
		{"injected", transcript.Block{Kind: transcript.BlockInjected, Text: "0123456789"}, 5},  // 5
		{"visible thinking ignores signature", transcript.Block{Kind: transcript.BlockThinking, Text: "0123456789", SignatureLen: 500}, 3},
		{"encrypted thinking by signature", transcript.Block{Kind: transcript.BlockThinking, SignatureLen: 1000}, 200},
		// 0.4 × (4+36) + 10 + 7 × 2 = 16 + 24 = 40
		{"tool_use", transcript.Block{Kind: transcript.BlockToolUse, ToolName: "Bash", Input: `{"command":"ls","description":"list"}`}, 40},
		// 0.3 × 20 + 2 + 1500 = 1508
		{"tool_result with image", transcript.Block{Kind: transcript.BlockToolResult, Text: "01234567890123456789", Images: 1}, 1508},
		{"image block", transcript.Block{Kind: transcript.BlockImage, Images: 1, ImageBytes: 5000}, 1500},
	} {
		b := tc.b
		if got := r.Block(&b); got != tc.want {
			t.Errorf("%s = %d, want %d", tc.name, got, tc.want)
		}
	}
	if got := r.MessageOverhead(); got != 3 {
		t.Errorf("message overhead = %d, want 3 (3.4 rounded)", got)
	}
	m := transcript.Message{Role: transcript.RoleUser, Blocks: []transcript.Block{{Kind: transcript.BlockText, Text: "0123456789"}}}
	if got := r.Message(&m); got != 6 {
		t.Errorf("message = %d, want 6", got)
	}
}

func TestFactorsFile(t *testing.T) {
	d := DefaultFactors()
	if d.Fit == nil || len(d.Fit.Fitted) == 0 {
		t.Fatalf("shipped factors carry no fit record: %+v", d)
	}
	if d.Prose <= 0 || d.ToolOutput <= 0 || d.ToolCall <= 0 {
		t.Errorf("shipped factors not fitted: %+v", d)
	}
	data, err := MarshalFactors(DefaultFactorSet())
	if err != nil {
		t.Fatal(err)
	}
	back, err := ParseFactors(data)
	if err != nil {
		t.Fatal(err)
	}
	if g := back.Generations[ReferenceGeneration]; g == nil || g.vector() != d.vector() {
		t.Errorf("round trip changed factors: %v vs %v", g, d.vector())
	}
	// An older single-set file is the reference generation's; other
	// generations derive from it with a note.
	old, err := ParseFactors([]byte(`{"prose": 0.3, "tool_output": 0.4, "image": 1000}`))
	if err != nil {
		t.Fatal(err)
	}
	if f, note := old.For(ReferenceGeneration, nil); f.Prose != 0.3 || note != "" {
		t.Errorf("reference of an old file: %+v %q", f, note)
	}
	if f, note := old.For(GenClaude47, nil); math.Abs(f.Prose-0.3*1.46) > 1e-9 || f.Image != 1000 || !strings.Contains(note, "claude-4.7") {
		t.Errorf("derived claude-4.7: %+v %q", f, note)
	}
	for _, bad := range []string{`{"prose": -1}`, `{"image": "x"}`, `not json`, `{"prose": 1e999}`,
		`{"generations": {"claude-3": {"prose": -1}}}`, `{"generations": {"claude-3": null}}`, `{"generations": 3}`} {
		if _, err := ParseFactors([]byte(bad)); err == nil {
			t.Errorf("ParseFactors(%s) accepted bad input", bad)
		}
	}
	// A default factors copy is independent of the shipped one.
	d.Prose = 99
	if DefaultFactors().Prose == 99 {
		t.Error("DefaultFactors returns shared state")
	}
}

func FuzzParseFactors(f *testing.F) {
	f.Add([]byte(`{"prose":0.3,"tool_output":0.33,"fit":{"fitted":["prose"]}}`))
	f.Add([]byte(`{}`))
	f.Add([]byte(`{"image":-2}`))
	f.Add([]byte(`{"generations":{"claude-3":{"prose":0.3},"o200k":{"prose":0.2}}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		set, err := ParseFactors(data)
		if err != nil {
			return
		}
		if set.Validate() != nil {
			t.Fatalf("accepted invalid factors %+v", set)
		}
		// Any accepted file gives a ruler that counts without panicking.
		fa, _ := set.For(GenClaude47, nil)
		r := NewCalibrated(fa).Uncached()
		b := transcript.Block{Kind: transcript.BlockToolUse, ToolName: "x", Input: `{"a":1}`}
		if r.Block(&b) < 0 {
			t.Fatal("negative count")
		}
	})
}

func FuzzTopLevelKeys(f *testing.F) {
	for _, s := range []string{`{"a":1}`, `{"a":{"b":"}"},"c":[1,{"d":2}]}`, `{"\"":1}`, `{{{`, `"`} {
		f.Add(s)
	}
	for _, s := range []string{`{"a\\":1,"b":2}`, `{"a\\\"":1,"b":"\\\\"}`, `{"x":"\\`, `{"a":"b\\\\\"c", "d":1}`, `{"a":1,"b`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		n := topLevelKeys(s)
		if n < 0 || n > strings.Count(s, `"`) {
			t.Fatalf("topLevelKeys(%q) = %d", s, n)
		}
		if want := topLevelKeysByByte(s); n != want {
			t.Fatalf("topLevelKeys(%q) = %d, byte by byte %d", s, n, want)
		}
	})
}

// topLevelKeysByByte is topLevelKeys walking every byte of a string, as it
// did before it jumped to the next quote: the reference for the fuzz test.
func topLevelKeysByByte(s string) int {
	depth, n := 0, 0
	inStr, esc, key := false, false, false
	for i := 0; i < len(s); i++ {
		c := s[i]
		if inStr {
			switch {
			case esc:
				esc = false
			case c == '\\':
				esc = true
			case c == '"':
				inStr = false
			}
			continue
		}
		switch c {
		case '"':
			inStr = true
			if depth == 1 && key {
				n++
				key = false
			}
		case '{', '[':
			depth++
			if depth == 1 && c == '{' {
				key = true
			}
		case '}', ']':
			depth--
		case ',':
			if depth == 1 {
				key = true
			}
		}
	}
	return n
}
