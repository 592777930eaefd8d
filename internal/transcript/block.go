package transcript

import "encoding/json"

// BlockKind is the kind of a content block.
type BlockKind uint8

// Block kinds (docs/architecture.md, transcript).
const (
	BlockText BlockKind = iota
	BlockThinking
	BlockToolUse
	BlockToolResult
	BlockImage
	// BlockInjected is content the harness renders into the prompt on its own
	// (Claude Code attachment records: hook context, listings, reminders,
	// edited-file contents). Model-visible, so rulers count it.
	BlockInjected
)

// String returns the kind's name as used in exports.
func (k BlockKind) String() string {
	switch k {
	case BlockText:
		return "text"
	case BlockThinking:
		return "thinking"
	case BlockToolUse:
		return "tool_use"
	case BlockToolResult:
		return "tool_result"
	case BlockImage:
		return "image"
	case BlockInjected:
		return "injected"
	}
	return "unknown"
}

// MaxImageEdge is the longest image edge the API keeps: larger images are
// scaled down, keeping their aspect ratio, before they are billed.
const MaxImageEdge = 1568

// ImagePixelsPerToken is the API's rate for images: about one token per
// 750 pixels of the (scaled) image.
const ImagePixelsPerToken = 750

// ScaledImagePixels returns the pixel count of a w×h image after the API
// scales its long edge down to MaxImageEdge (never up).
func ScaledImagePixels(w, h int) int64 {
	if w <= 0 || h <= 0 {
		return 0
	}
	long := max(w, h)
	if long <= MaxImageEdge {
		return int64(w) * int64(h)
	}
	sw := max(1, int((int64(w)*MaxImageEdge+int64(long)/2)/int64(long)))
	sh := max(1, int((int64(h)*MaxImageEdge+int64(long)/2)/int64(long)))
	return int64(sw) * int64(sh)
}

// ImageTokens estimates what a w×h image costs as input tokens:
// ScaledImagePixels / ImagePixelsPerToken, rounded up.
func ImageTokens(w, h int) int {
	p := ScaledImagePixels(w, h)
	return int((p + ImagePixelsPerToken - 1) / ImagePixelsPerToken)
}

// TokenSlots is how many rulers can cache a count on a block at once.
const TokenSlots = 8

// Block is one content block of a Message.
type Block struct {
	Kind BlockKind
	// Text is the text of a text block, the visible text of a thinking block,
	// the text content of a tool result, or the rendered text of an injected
	// block.
	Text string
	// SignatureLen is the length of a thinking block's signature. Encrypted
	// thinking has empty Text and a long signature; rulers count it from this.
	SignatureLen int
	// ToolID is the tool_use id of a tool_use block, or the tool_use_id a
	// tool_result answers.
	ToolID string
	// ToolName is the tool's name on a tool_use block, and on a tool_result
	// block once paired with its call.
	ToolName string
	// Input is the JSON text of a tool_use block's input.
	Input string
	// Path is the file path a tool_use acts on (file_path, notebook_path or
	// path in its input), when it has one.
	Path string
	// Command is the shell command of a Bash-like tool_use.
	Command string
	// IsError marks a failed tool result.
	IsError bool
	// Tool is what the tool of a tool_use or tool_result block does, set by
	// the loader (Transcript.ClassifyTools); ask Block.ToolKind, which
	// classifies a block the loader did not.
	Tool ToolKind
	// Images is the number of images in an image block (1) or a tool result.
	Images int
	// ImageBytes is the size of their data (base64 text length); the data
	// itself is not kept.
	ImageBytes int
	// MediaType of an image block.
	MediaType string
	// InjectedKind is the attachment type of an injected block.
	InjectedKind string
	// ImagePixels is the pixel count the API bills for the block's images
	// (each scaled so its long edge is at most MaxImageEdge), summed over
	// the images whose dimensions the reader could read from their data.
	ImagePixels int64
	// ImageTokens is the estimated token cost of those images
	// (ImageTokens(w, h) each); 0 when no image's dimensions are known.
	ImageTokens int
	// SizedImages is how many of Images have known dimensions.
	SizedImages int
	// ToolRefs are the tool names of tool_reference blocks: tool
	// definitions the harness loads into the context on demand. Their
	// schemas are not in the recording.
	ToolRefs []string

	tokens [TokenSlots]int32
}

// CachedTokens returns the count a ruler stored in slot, if any.
func (b *Block) CachedTokens(slot int) (int, bool) {
	v := b.tokens[slot]
	return int(v) - 1, v != 0
}

// SetCachedTokens stores a ruler's count for this block in slot.
func (b *Block) SetCachedTokens(slot, n int) { b.tokens[slot] = int32(n) + 1 }

// ResetTokenCache forgets every cached count (after the block changed).
func (b *Block) ResetTokenCache() { b.tokens = [TokenSlots]int32{} }

// InputFields fills Path and Command of a tool_use block from its Input JSON,
// for readers that do not extract them while parsing.
func (b *Block) InputFields() {
	if b.Kind != BlockToolUse || b.Input == "" || (b.Path != "" || b.Command != "") {
		return
	}
	var in map[string]any
	if json.Unmarshal([]byte(b.Input), &in) != nil {
		return
	}
	for _, k := range []string{"file_path", "notebook_path", "path"} {
		if s, ok := in[k].(string); ok && s != "" {
			b.Path = s
			break
		}
	}
	if s, ok := in["command"].(string); ok {
		b.Command = s
	} else if arr, ok := in["command"].([]any); ok {
		// Codex-style argv: join it as a shell line.
		for i, a := range arr {
			if s, ok := a.(string); ok {
				if i > 0 {
					b.Command += " "
				}
				b.Command += s
			}
		}
	}
}
