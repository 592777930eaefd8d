package tokens

import (
	"strings"
	"testing"

	"github.com/compactbench/compactbench/internal/transcript"
)

func TestModelLookup(t *testing.T) {
	tests := []struct {
		model, tokenizer string
		window           int
		strips           bool
		input            float64
	}{
		{"claude-opus-4-5-20251101", GenClaude3, 200_000, false, 5},
		{"claude-opus-4-6", GenClaude3, 200_000, false, 5},
		{"claude-opus-4-7", GenClaude47, 200_000, false, 5},
		{"claude-opus-4-8", GenClaude47, 200_000, false, 5},
		{"claude-opus-5", GenClaude47, 200_000, false, 5},
		{"claude-sonnet-5", GenClaude47, 200_000, false, 3},
		{"claude-sonnet-4-5-20250929", GenClaude3, 200_000, true, 3},
		{"claude-sonnet-4-20250514", GenClaude3, 200_000, true, 3},
		{"claude-opus-4-20250514", GenClaude3, 200_000, true, 15},
		{"claude-opus-4-1-20250805", GenClaude3, 200_000, true, 15},
		{"claude-haiku-4-5-20251001", GenClaude3, 200_000, true, 1},
		{"claude-3-5-sonnet-20241022", GenClaude3, 200_000, true, 3},
		{"gpt-5.4", GenO200k, 400_000, false, 1.25},
		{"gpt-4o-2024-08-06", GenO200k, 128_000, false, 2.5},
		{"gpt-4", GenCl100k, 8_192, false, 30},
		{"some-local-model", GenClaude3, 200_000, false, 3},
	}
	for _, tc := range tests {
		e := DefaultModels().Lookup(tc.model)
		if e.Tokenizer != tc.tokenizer || e.Window() != tc.window || e.StripsThinking != tc.strips || e.Input != tc.input {
			t.Errorf("%s: %+v, want tokenizer %s window %d strips %v input %v", tc.model, e, tc.tokenizer, tc.window, tc.strips, tc.input)
		}
		if StripsOldThinking(tc.model) != tc.strips {
			t.Errorf("StripsOldThinking(%s) != %v", tc.model, tc.strips)
		}
	}
	if r := DefaultModels().Ratio(GenClaude47); r < 1.3 || r > 1.6 {
		t.Errorf("claude-4.7 ratio %v", r)
	}
}

func TestParseModelsErrors(t *testing.T) {
	tests := []struct{ yaml, want string }{
		{"models: []\n", "no models"},
		{"models:\n  - {pattern: x, windows: [1]}\n", "no tokenizer"},
		{"models:\n  - {pattern: x, tokenizer: claude-3}\n", "no windows"},
		{"models:\n  - {pattern: x, tokenizer: nope, windows: [1]}\n", `tokenizer "nope"`},
		{"models:\n  - {pattern: x, tokenizer: claude-3, windows: [2, 1]}\n", "smallest first"},
		{"models:\n  - {pattern: a*b, tokenizer: claude-3, windows: [1]}\n", "may only end"},
		{"models:\n  - {pattern: x, tokenizer: claude-3, windows: [1], colour: red}\n", "line 2"},
		{"tokenizers: {claude-3: 0}\nmodels:\n  - {pattern: x, tokenizer: claude-3, windows: [1]}\n", "want a finite number > 0"},
	}
	for _, tc := range tests {
		_, err := ParseModels([]byte(tc.yaml))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: error %v, want %q", tc.yaml, err, tc.want)
		}
	}
	m, err := ParseModels([]byte("models:\n  - {pattern: my-model, tokenizer: claude-3, windows: [50000, 100000], input: 1, output_price: 2, strips_thinking: true}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if e := m.Lookup("my-model"); e.Window() != 50_000 || !e.StripsThinking {
		t.Errorf("my-model: %+v", e)
	}
	if e := m.Lookup("my-model-2"); e != &fallbackModel {
		t.Errorf("an exact pattern matched a longer name: %+v", e)
	}
}

// usageSession is a transcript of model whose calls recorded the given real contexts.
func usageSession(model string, reals ...int64) *transcript.Transcript {
	tr := &transcript.Transcript{Model: model}
	for _, r := range reals {
		tr.Messages = append(tr.Messages,
			transcript.Message{Role: transcript.RoleUser, Blocks: []transcript.Block{{Kind: transcript.BlockText, Text: "q"}}},
			transcript.Message{Role: transcript.RoleAssistant, Model: model, Usage: &transcript.Usage{Input: r}})
	}
	return tr
}

func TestWindowOf(t *testing.T) {
	tests := []struct {
		name     string
		tr       *transcript.Transcript
		override int
		want     int
		source   string
	}{
		{"within the table's window", usageSession("claude-opus-5", 150_000, 190_000), 0, 200_000, WindowTable},
		{"the 1M variant", usageSession("claude-opus-5", 150_000, 679_000), 0, 1_000_000, WindowInferred},
		{"flag wins", usageSession("claude-opus-5", 679_000), 60_000, 60_000, WindowFlag},
		{"beyond every listed window: a standard size", usageSession("claude-opus-4-5", 250_000), 0, 400_000, WindowInferred},
		{"no usage", usageSession("gpt-5.4"), 0, 400_000, WindowTable},
		// One corrupt record (valid as a count, impossible as a context)
		// must not set the window: another user's damaged file.
		{"a context no model serves", usageSession("claude-opus-4-5", 150_000, 900_000_000), 0, 200_000, WindowTable},
	}
	for _, tc := range tests {
		w, src := DefaultModels().WindowOf(tc.tr, tc.override)
		if w != tc.want || src != tc.source {
			t.Errorf("%s: %d %s, want %d %s", tc.name, w, src, tc.want, tc.source)
		}
	}
}

// thinkingSession is a two-turn session whose first turn thinks at length
// (encrypted: a 60,000-character signature, ~12,000 tokens); the second
// call's real context is the first's minus fall.
func thinkingSession(model string, fall int64) *transcript.Transcript {
	const first = 100_000
	prompt := transcript.Message{Role: transcript.RoleUser, Blocks: []transcript.Block{{Kind: transcript.BlockText, Text: "q"}}}
	return &transcript.Transcript{Model: model, Messages: []transcript.Message{
		prompt,
		{Role: transcript.RoleAssistant, Model: model, Usage: &transcript.Usage{Input: first},
			Blocks: []transcript.Block{{Kind: transcript.BlockThinking, SignatureLen: 60_000}}},
		prompt,
		{Role: transcript.RoleAssistant, Model: model, Usage: &transcript.Usage{Input: first - fall}},
	}}
}

// TestUnrecordedDropsLeaveStrippedThinking: another user's sessions that
// think at length on a model whose API strips earlier turns' thinking fall
// by that thinking at every new prompt; that is not an unrecorded drop.
// The same fall on a model that keeps its thinking is one, and a fall
// beyond what stripping explains still counts, net of the thinking.
func TestUnrecordedDropsLeaveStrippedThinking(t *testing.T) {
	models := DefaultModels()
	if !models.Lookup("claude-sonnet-4-5").StripsThinking || models.Lookup("claude-opus-4-6").StripsThinking {
		t.Fatal("the model table's thinking rule changed: pick other models for this test")
	}
	tests := []struct {
		model string
		fall  int64
		want  int64 // 0: no drop
	}{
		{"claude-sonnet-4-5", 11_000, 0},      // stripping explains it (~12,000 tokens)
		{"claude-opus-4-6", 11_000, 11_000},   // keeps its thinking: a drop
		{"claude-sonnet-4-5", 40_000, 28_000}, // beyond the thinking: the rest is a drop
		{"claude-sonnet-4-5", 15_000, 0},      // 3,000 beyond: under DropTokens
	}
	for _, tc := range tests {
		got := UnrecordedDrops(thinkingSession(tc.model, tc.fall), models)
		if got[3] != tc.want || (tc.want == 0) != (len(got) == 0) {
			t.Errorf("%s, fall %d: drops %v, want %d at message 3", tc.model, tc.fall, got, tc.want)
		}
	}
}
