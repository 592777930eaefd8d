package tokens

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"sync"

	"github.com/compactbench/compactbench/internal/transcript"
)

// Factors parameterise the calibrated ruler. A block's count is the sum of
// its class's tokens-per-byte factor times its byte length and the structural
// constants it carries, rounded to an integer; a message adds Message.
//
// Content classes:
//
//   - text blocks (user prompts, assistant replies, harness notes written as
//     user text, summaries): Prose per byte;
//   - injected blocks (attachment records rendered into the prompt): Injected;
//   - thinking with visible text: Thinking per byte of the text; the
//     signature of such a block is not counted (in the data its length
//     follows the text's: ~250 + 1.3 bytes per text byte);
//   - thinking with empty text (encrypted or redacted): Signature per byte of
//     the signature (or of redacted_thinking data);
//   - tool_use: ToolInput per byte of name + JSON input, plus ToolCall, plus
//     ToolParam per top-level key of the input (the API renders each
//     parameter with its own markup);
//   - tool_result: ToolOutput per byte of its text, plus ToolResult, plus
//     Image per image it carries;
//   - image blocks: Image per image, whatever its size (the transcript keeps
//     no pixel dimensions).
//
// Bytes rather than characters: multi-byte scripts cost more tokens per
// character, and their byte length tracks that better than rune counts.
type Factors struct {
	Prose      float64 `json:"prose"`
	Injected   float64 `json:"injected"`
	Thinking   float64 `json:"thinking"`
	Signature  float64 `json:"signature"`
	ToolInput  float64 `json:"tool_input"`
	ToolOutput float64 `json:"tool_output"`
	Message    float64 `json:"message"`
	ToolCall   float64 `json:"tool_call"`
	ToolParam  float64 `json:"tool_param"`
	ToolResult float64 `json:"tool_result"`
	Image      float64 `json:"image"`
	// Source says how the factors were obtained: "fitted" on recorded
	// usage, or "derived" from the reference generation's times the
	// tokenizer's ratio (when the corpus had no calls of the generation).
	Source string `json:"source,omitempty"`
	// Fit says where the factors come from; informational.
	Fit *FitInfo `json:"fit,omitempty"`
}

// Scaled returns the factors with every per-byte factor and structural
// constant multiplied by r (a tokenizer's ratio): what another tokenizer
// generation spends on the same content. The image cost is the API's pixel
// count, not the tokenizer's, and stays.
func (f *Factors) Scaled(r float64) *Factors {
	v := f.vector()
	for j := range v {
		if j != fImage {
			v[j] *= r
		}
	}
	out := &Factors{}
	out.setVector(v)
	return out
}

// FactorSet holds the calibrated ruler's factors per tokenizer generation
// (the model table's tokenizer names).
type FactorSet struct {
	Generations map[string]*Factors `json:"generations"`
}

// For returns the factors of a generation and, when the set has none for
// it, a note saying how they were derived instead: the reference
// generation's factors times the table's tokenizer ratio (a set without the
// reference generation takes the shipped one's).
func (s *FactorSet) For(gen string, models *Models) (*Factors, string) {
	if s != nil {
		if f := s.Generations[gen]; f != nil {
			return f, ""
		}
	}
	ref := s.reference()
	if gen == ReferenceGeneration {
		return ref, ""
	}
	r := models.Ratio(gen)
	d := ref.Scaled(r)
	d.Source = "derived"
	return d, fmt.Sprintf("%s: no factors fitted for this tokenizer, using %s's × %.2f", gen, ReferenceGeneration, r)
}

// reference is the set's reference generation factors, or the shipped ones.
func (s *FactorSet) reference() *Factors {
	if s != nil {
		if f := s.Generations[ReferenceGeneration]; f != nil {
			return f
		}
	}
	return defaultFactorSet().Generations[ReferenceGeneration]
}

// Validate checks every generation's factors.
func (s *FactorSet) Validate() error {
	for g, f := range s.Generations {
		if f == nil {
			return fmt.Errorf("calibration factors: generation %s: no factors", g)
		}
		if err := f.Validate(); err != nil {
			return fmt.Errorf("generation %s: %w", g, err)
		}
	}
	return nil
}

// feature indices: Factors as a vector, in field order.
const (
	fProse = iota
	fInjected
	fThinking
	fSignature
	fToolInput
	fToolOutput
	fMessage
	fToolCall
	fToolParam
	fToolResult
	fImage
	nFeatures
)

// featureNames are the JSON names of the factors, by feature index.
var featureNames = [nFeatures]string{"prose", "injected", "thinking", "signature", "tool_input", "tool_output",
	"message", "tool_call", "tool_param", "tool_result", "image"}

type features [nFeatures]float64

func (f *Factors) vector() features {
	return features{f.Prose, f.Injected, f.Thinking, f.Signature, f.ToolInput, f.ToolOutput,
		f.Message, f.ToolCall, f.ToolParam, f.ToolResult, f.Image}
}

func (f *Factors) setVector(v features) {
	f.Prose, f.Injected, f.Thinking, f.Signature, f.ToolInput, f.ToolOutput = v[0], v[1], v[2], v[3], v[4], v[5]
	f.Message, f.ToolCall, f.ToolParam, f.ToolResult, f.Image = v[6], v[7], v[8], v[9], v[10]
}

// Validate reports factors that cannot be used: negative or not finite.
func (f *Factors) Validate() error {
	v := f.vector()
	for i, x := range v {
		if math.IsNaN(x) || math.IsInf(x, 0) || x < 0 {
			return fmt.Errorf("calibration factor %s = %v: want a finite number >= 0", featureNames[i], x)
		}
	}
	return nil
}

// blockFeatures adds the calibrated model's raw quantities of one block to v.
func blockFeatures(b *transcript.Block, v *features) {
	switch b.Kind {
	case transcript.BlockText:
		v[fProse] += float64(len(b.Text))
	case transcript.BlockInjected:
		v[fInjected] += float64(len(b.Text))
	case transcript.BlockThinking:
		if b.Text != "" {
			v[fThinking] += float64(len(b.Text))
		} else {
			v[fSignature] += float64(b.SignatureLen)
		}
	case transcript.BlockToolUse:
		v[fToolInput] += float64(len(b.ToolName) + len(b.Input))
		v[fToolCall]++
		v[fToolParam] += float64(topLevelKeys(b.Input))
	case transcript.BlockToolResult:
		v[fToolOutput] += float64(len(b.Text))
		v[fToolResult]++
		v[fImage] += float64(b.Images)
	case transcript.BlockImage:
		v[fImage] += float64(b.Images)
	}
}

// topLevelKeys counts the keys of a JSON object text at depth one, without
// decoding it. Anything that is not an object has none. Inside a string it
// jumps to the next quote (a tool input is mostly string content, such as
// a file written whole): the quote ends the string unless an odd run of
// backslashes precedes it.
func topLevelKeys(s string) int {
	depth, n := 0, 0
	key := false
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case '"':
			if depth == 1 && key {
				n++
				key = false
			}
			end := stringEnd(s, i+1)
			if end < 0 {
				return n
			}
			i = end
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

// stringEnd returns the index of the quote that ends a JSON string whose
// content starts at from, or -1 if it does not end.
func stringEnd(s string, from int) int {
	for {
		q := strings.IndexByte(s[from:], '"')
		if q < 0 {
			return -1
		}
		q += from
		k := q - 1
		for k >= from && s[k] == '\\' {
			k--
		}
		if (q-1-k)%2 == 0 {
			return q
		}
		from = q + 1
	}
}

// calibrated is the counter of the calibrated ruler.
type calibrated struct {
	f   features
	msg int
}

func (c *calibrated) message() int { return c.msg }

func (c *calibrated) block(b *transcript.Block) int {
	var v features
	blockFeatures(b, &v)
	s := 0.0
	for i := range v {
		s += c.f[i] * v[i]
	}
	return int(math.Round(s))
}

// NewCalibrated returns the calibrated ruler with the given factors. It uses
// the calibrated cache slot: within a run, use one set of factors (or
// Uncached for a second one).
func NewCalibrated(f *Factors) *Ruler {
	c := &calibrated{f: f.vector()}
	c.f[fMessage] = 0
	c.msg = int(math.Round(f.Message))
	return &Ruler{name: Calibrated, id: RulerCalibrated, slot: slotCalibrated, c: c}
}

//go:embed default_factors.json
var defaultFactorsJSON []byte

// defaultFactorSet parses the embedded factors once, when first needed (not
// at process start).
var defaultFactorSet = sync.OnceValue(func() *FactorSet {
	s, err := ParseFactors(defaultFactorsJSON)
	if err != nil {
		panic("tokens: embedded default_factors.json: " + err.Error())
	}
	if s.Generations[ReferenceGeneration] == nil {
		panic("tokens: embedded default_factors.json: no " + ReferenceGeneration + " factors")
	}
	return s
})

// DefaultFactors returns a copy of the shipped factors of the reference
// generation (claude-3), fitted with `compactbench calibrate` on real Claude
// Code sessions (see the file's fit sections for the corpus and errors).
func DefaultFactors() *Factors {
	f := *defaultFactorSet().Generations[ReferenceGeneration]
	return &f
}

// DefaultFactorSet returns the shipped factors of every generation (shared:
// do not modify).
func DefaultFactorSet() *FactorSet { return defaultFactorSet() }

// ParseFactors reads a factors file written by `compactbench calibrate`:
// factors per generation ({"generations": {...}}), or one set of factors
// (an older file), which is taken as the reference generation's.
func ParseFactors(data []byte) (*FactorSet, error) {
	var probe struct {
		Generations json.RawMessage `json:"generations"`
	}
	if err := json.Unmarshal(data, &probe); err != nil {
		return nil, fmt.Errorf("calibration factors: %w", err)
	}
	if probe.Generations != nil {
		var s FactorSet
		if err := json.Unmarshal(data, &s); err != nil {
			return nil, fmt.Errorf("calibration factors: %w", err)
		}
		if err := s.Validate(); err != nil {
			return nil, err
		}
		return &s, nil
	}
	var f Factors
	if err := json.Unmarshal(data, &f); err != nil {
		return nil, fmt.Errorf("calibration factors: %w", err)
	}
	if err := f.Validate(); err != nil {
		return nil, err
	}
	return &FactorSet{Generations: map[string]*Factors{ReferenceGeneration: &f}}, nil
}

// MarshalFactors renders a factor set as the indented JSON calibrate writes.
func MarshalFactors(s *FactorSet) ([]byte, error) {
	data, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(data, '\n'), nil
}

// NamedFactor is one factor with its JSON name.
type NamedFactor struct {
	Name  string
	Value float64
}

// Named lists the factors in file order.
func (f *Factors) Named() []NamedFactor {
	v := f.vector()
	out := make([]NamedFactor, nFeatures)
	for i := range v {
		out[i] = NamedFactor{featureNames[i], v[i]}
	}
	return out
}
