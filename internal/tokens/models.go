package tokens

import (
	"bytes"
	_ "embed"
	"fmt"
	"math"
	"slices"
	"strings"
	"sync"

	"go.yaml.in/yaml/v3"

	"github.com/compactbench/compactbench/internal/transcript"
)

// Tokenizer generations: each has its own calibrated factor set.
const (
	// GenClaude3 is the tokenizer of Claude 3 up to claude-opus-4-6.
	GenClaude3 = "claude-3"
	// GenClaude47 is the tokenizer of claude-opus-4-7 and later models,
	// which spends about 1.46× as many tokens per byte on agent sessions.
	GenClaude47 = "claude-4.7"
	// GenO200k and GenCl100k are OpenAI's encodings.
	GenO200k  = "o200k"
	GenCl100k = "cl100k"
)

// ReferenceGeneration is the generation other generations' token ratios are
// relative to.
const ReferenceGeneration = GenClaude3

// Model is one entry of the model table.
type Model struct {
	// Pattern matches model names: "prefix*", "*" (any) or an exact name.
	Pattern   string `yaml:"pattern"`
	Tokenizer string `yaml:"tokenizer"`
	// Windows are the context windows the model is served with, smallest
	// first; Windows[0] is the default.
	Windows []int `yaml:"windows"`
	// Output is the largest output per call.
	Output int `yaml:"output"`
	// Input and OutputPrice are list prices in USD per million tokens.
	Input       float64 `yaml:"input"`
	OutputPrice float64 `yaml:"output_price"`
	// StripsThinking: the API leaves out the thinking blocks of earlier
	// turns (a turn ends when a user message that is not only tool results
	// arrives).
	StripsThinking bool `yaml:"strips_thinking"`
}

// Matches reports whether the entry's pattern matches a model name.
func (m *Model) Matches(name string) bool {
	if p, ok := strings.CutSuffix(m.Pattern, "*"); ok {
		return strings.HasPrefix(name, p)
	}
	return name == m.Pattern
}

// Window is the entry's default context window.
func (m *Model) Window() int { return m.Windows[0] }

// Models is the model table: entries in match order and the tokenizer
// generations' token ratios. It is immutable once parsed.
type Models struct {
	// Tokenizers gives each generation's tokens per byte relative to
	// ReferenceGeneration.
	Tokenizers map[string]float64 `yaml:"tokenizers"`
	Entries    []Model            `yaml:"models"`
}

//go:embed models.yaml
var defaultModelsYAML []byte

// defaultModels parses the embedded table once, when first needed (not at
// process start).
var defaultModels = sync.OnceValue(func() *Models {
	m, err := ParseModels(defaultModelsYAML)
	if err != nil {
		panic("tokens: embedded models.yaml: " + err.Error())
	}
	return m
})

// DefaultModels returns the shipped model table (shared: do not modify).
func DefaultModels() *Models { return defaultModels() }

// fallbackModel answers for names no entry matches (a table without "*").
var fallbackModel = Model{Pattern: "*", Tokenizer: GenClaude3, Windows: []int{200_000}, Output: 64_000, Input: 3, OutputPrice: 15}

// ParseModels reads a model table (YAML, unknown keys are errors; errors
// name the line).
func ParseModels(data []byte) (*Models, error) {
	var m Models
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(&m); err != nil {
		return nil, fmt.Errorf("model table: %w", err)
	}
	if len(m.Entries) == 0 {
		return nil, fmt.Errorf("model table: no models")
	}
	if m.Tokenizers == nil {
		m.Tokenizers = map[string]float64{}
	}
	if _, ok := m.Tokenizers[ReferenceGeneration]; !ok {
		m.Tokenizers[ReferenceGeneration] = 1
	}
	for g, r := range m.Tokenizers {
		if !(r > 0) || math.IsInf(r, 0) {
			return nil, fmt.Errorf("model table: tokenizer %s: ratio %v, want a finite number > 0", g, r)
		}
	}
	for i := range m.Entries {
		e := &m.Entries[i]
		where := fmt.Sprintf("model table: models[%d] (%q)", i, e.Pattern)
		switch {
		case e.Pattern == "":
			return nil, fmt.Errorf("%s: no pattern", where)
		case strings.Contains(strings.TrimSuffix(e.Pattern, "*"), "*"):
			return nil, fmt.Errorf("%s: \"*\" may only end a pattern", where)
		case e.Tokenizer == "":
			return nil, fmt.Errorf("%s: no tokenizer", where)
		case len(e.Windows) == 0:
			return nil, fmt.Errorf("%s: no windows", where)
		case e.Input < 0 || e.OutputPrice < 0 || e.Output < 0:
			return nil, fmt.Errorf("%s: negative output limit or price", where)
		}
		if _, ok := m.Tokenizers[e.Tokenizer]; !ok {
			return nil, fmt.Errorf("%s: tokenizer %q is not under tokenizers", where, e.Tokenizer)
		}
		for k, w := range e.Windows {
			if w <= 0 || (k > 0 && w <= e.Windows[k-1]) {
				return nil, fmt.Errorf("%s: windows %v: want positive sizes, smallest first", where, e.Windows)
			}
		}
	}
	return &m, nil
}

// Lookup returns the first entry matching a model name (a built-in Claude
// default when none does). A nil table is the shipped one.
func (ms *Models) Lookup(name string) *Model {
	if ms == nil {
		ms = defaultModels()
	}
	if i := ms.index(name); i >= 0 {
		return &ms.Entries[i]
	}
	return &fallbackModel
}

// index is the place in Entries of the first entry matching a model name,
// or -1 when none does (the fallback model answers).
func (ms *Models) index(name string) int {
	for i := range ms.Entries {
		if ms.Entries[i].Matches(name) {
			return i
		}
	}
	return -1
}

// Generations lists the table's tokenizer generations, reference first,
// then by name.
func (ms *Models) Generations() []string {
	if ms == nil {
		ms = defaultModels()
	}
	out := []string{ReferenceGeneration}
	var rest []string
	for g := range ms.Tokenizers {
		if g != ReferenceGeneration {
			rest = append(rest, g)
		}
	}
	slices.Sort(rest)
	return append(out, rest...)
}

// Ratio is a generation's tokens per byte relative to the reference
// generation (1 when the table does not say).
func (ms *Models) Ratio(gen string) float64 {
	if ms == nil {
		ms = defaultModels()
	}
	if r, ok := ms.Tokenizers[gen]; ok {
		return r
	}
	return 1
}

// StripsOldThinking reports whether a call to model leaves out the thinking
// blocks of earlier turns, by the shipped table.
func StripsOldThinking(model string) bool { return defaultModels().Lookup(model).StripsThinking }

// Window sources say where a transcript's effective window comes from.
const (
	WindowTable    = "table"
	WindowInferred = "inferred"
	WindowFlag     = "flag"
)

// standardWindows are the sizes a window is raised to when a recording
// exceeds every window its model's entry lists.
var standardWindows = []int{128_000, 200_000, 400_000, 1_000_000, 2_000_000}

// WindowOf is a transcript's effective context window and its source: the
// override when > 0 ("flag"); else its model's default window ("table"),
// raised to the smallest window of the entry (or standard size) that holds
// the largest real context a call recorded ("inferred"), since a model
// string does not say which window variant served it. A context beyond
// every standard window is taken for a corrupt record and ignored.
func (ms *Models) WindowOf(t *transcript.Transcript, override int) (int, string) {
	if override > 0 {
		return override, WindowFlag
	}
	e := ms.Lookup(t.Model)
	w := e.Window()
	peak := int64(0)
	for i := range t.Messages {
		if u := t.Messages[i].Usage; u != nil && t.Messages[i].IsCall() {
			peak = max(peak, u.Context())
		}
	}
	if peak <= int64(w) {
		return w, WindowTable
	}
	for _, c := range append(append([]int(nil), e.Windows...), standardWindows...) {
		if int64(c) >= peak {
			return c, WindowInferred
		}
	}
	// No model serves a context beyond every standard window: such a
	// count is a corrupt or hand-edited usage record, and one of them must
	// not move the window every strategy and overflow is judged against.
	return w, WindowTable
}
