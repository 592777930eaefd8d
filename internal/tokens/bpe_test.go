package tokens

import (
	"testing"

	"github.com/compactbench/compactbench/internal/transcript"
)

// bpeCases are known strings with their token counts from the reference
// implementation (the tiktoken npm package, 1.0.22, which is OpenAI's Rust
// tiktoken compiled to WebAssembly; encode(text, [], []) so special-token
// strings count as ordinary text).
var bpeCases = []struct {
	text          string
	o200k, cl100k int
}{
	{"", 0, 0},
	{"hello world", 2, 2},
	{"tiktoken is great!", 6, 6},
	{"I'm sure they'll say it's FINE, aren't they?", 11, 15},
	{"你好，世界！这是一个测试。", 8, 12},
	{"👋🏽 hi 🚀🚀", 9, 13},
	{"func main() {\n\tfmt.Println(\"hi\")\n\tfor i := 0; i < 10; i++ {\n\t\tx += i\n\t}\n}\n", 31, 31},
	{"{\"command\":\"ls -la /tmp\",\"description\":\"List files\\nwith \\\"quotes\\\"\"}", 19, 19},
	{"1234567890 3.14159 2026-11-21T18:10:19Z", 23, 23},
	{"a    b\n\n\n   c\t\td  \n", 9, 9},
	{"<|endoftext|> is just text here <|endofprompt|>", 18, 17},
	{"supercalifragilisticexpialidocious antidisestablishmentarianism", 16, 17},
	{"C:\\Users\\Mischa\\AppData\\Local\\Temp\\claude\\tasks\\bd2176a.output", 23, 22},
	{"Ünïcödé façade naïve café — “quotes” … ellipsis", 16, 19},
	{"     1\tpackage main\n     2\t\n     3\timport \"os\"\n", 18, 18},
	{"data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==", 57, 58},
}

func TestBPEReferenceCounts(t *testing.T) {
	o, _ := ByName(O200k)
	c, _ := ByName(Cl100k)
	for _, tc := range bpeCases {
		if got := o.Text(tc.text); got != tc.o200k {
			t.Errorf("o200k(%q) = %d, want %d", tc.text, got, tc.o200k)
		}
		if got := c.Text(tc.text); got != tc.cl100k {
			t.Errorf("cl100k(%q) = %d, want %d", tc.text, got, tc.cl100k)
		}
	}
}

func TestBPEBlocks(t *testing.T) {
	o, _ := ByName(O200k)
	// A tool call counts its name and its input, each encoded on its own:
	// "Bash" is 1 token in o200k; the input is case 8 above (19).
	b := transcript.Block{Kind: transcript.BlockToolUse, ToolName: "Bash", Input: bpeCases[7].text}
	if got := o.Uncached().Block(&b); got != o.Text("Bash")+19 {
		t.Errorf("tool_use = %d, want %d", got, o.Text("Bash")+19)
	}
	img := transcript.Block{Kind: transcript.BlockImage, Images: 1}
	if got := o.Block(&img); got != 0 {
		t.Errorf("image = %d, want 0", got)
	}
	if got := o.MessageOverhead(); got != 0 {
		t.Errorf("message overhead = %d, want 0", got)
	}
}
