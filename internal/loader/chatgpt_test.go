package loader

import (
	"os"
	"runtime"
	"strings"
	"testing"

	"github.com/compactbench/compactbench/internal/transcript"
)

// TestChatGPTExport checks what the ChatGPT reader makes of the
// conformance export: the current_node branch, a tool call and its result,
// image pixels from the recorded size, and harness content.
func TestChatGPTExport(t *testing.T) {
	trs := readPath(t, "testdata/conformance/chatgpt-conversations.json", "")
	if len(trs) != 2 {
		t.Fatalf("%d transcripts, want 2", len(trs))
	}
	a := trs[0]
	if a.ID != "6a1b2c3d-0000-4000-8000-000000000001" || a.Format != ChatGPTFormat || a.Model != "gpt-4o" {
		t.Errorf("id %s format %s model %s", a.ID, a.Format, a.Model)
	}
	var texts []string
	for _, m := range a.Messages {
		texts = append(texts, m.Role.String()+":"+m.Text())
	}
	if got := strings.Join(texts, "|"); strings.Contains(got, "Bar chart again") || !strings.Contains(got, "markers") {
		t.Errorf("messages %q: want the current_node branch only", got)
	}
	img := a.Messages[0].Blocks[0]
	if img.Kind != transcript.BlockImage || img.ImageTokens != transcript.ImageTokens(1920, 1080) {
		t.Errorf("image block %+v, want 1920x1080's tokens", img)
	}
	call, res := a.Messages[1].Blocks[0], a.Messages[2].Blocks[0]
	if call.Kind != transcript.BlockToolUse || call.ToolName != "python" || res.Kind != transcript.BlockToolResult || res.ToolID != call.ToolID {
		t.Errorf("call %+v result %+v, want a python call and its result", call, res)
	}
	if a.Stats.OffPath["branch"] != 2 {
		t.Errorf("off path %v, want the 2 nodes of the other branch", a.Stats.OffPath)
	}
	b := trs[1]
	if len(b.Messages) != 3 || !b.Messages[0].IsMeta || b.Stats.IgnoredByType["reasoning_recap"] != 1 {
		t.Errorf("messages %d, first meta %v, ignored %v", len(b.Messages), b.Messages[0].IsMeta, b.Stats.IgnoredByType)
	}
}

func FuzzChatGPT(f *testing.F) {
	data, err := os.ReadFile("testdata/conformance/chatgpt-conversations.json")
	if err != nil {
		f.Fatal(err)
	}
	f.Add(data)
	f.Add([]byte(`[{"mapping":{"a":{"id":"a","parent":"b","message":{"author":{"role":"user"},"content":{"content_type":"text","parts":["x"]}}},"b":{"id":"b","parent":"a"}},"current_node":"a"}]`))
	f.Add([]byte(`{"mapping":{"a":{"parent":"zz","message":{"author":{"role":"tool"},"content":{"content_type":"mystery","parts":[1,"y"]}}}}}`))
	f.Fuzz(func(t *testing.T, data []byte) { fuzzRead(t, ChatGPTFormat, data) })
}

// TestChatGPTCallJoinsLinearly checks that the input of a tool call made of
// many parts is joined in one pass: appending part by part to a string
// copies the text so far each time, 20 000 parts of 10 bytes 2 GB.
func TestChatGPTCallJoinsLinearly(t *testing.T) {
	const n, part = 20_000, "0123456789"
	blocks := make([]transcript.Block, n)
	for i := range blocks {
		blocks[i] = transcript.Block{Kind: transcript.BlockText, Text: part}
	}
	b := newBuilder("x.json", ChatGPTFormat)
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	call := chatGPTCall(b, "python", blocks)
	runtime.ReadMemStats(&after)
	if want := jsonObject([]string{"input"}, []string{strings.Repeat(part, n)}); call.Input != want {
		t.Fatalf("input of %d bytes, want the %d parts joined (%d bytes)", len(call.Input), n, len(want))
	}
	if got := after.TotalAlloc - before.TotalAlloc; got > uint64(20*n*len(part)) {
		t.Errorf("joining %d bytes allocated %d bytes", n*len(part), got)
	}
}
