package gen

// The usage model. Generated usage is not measured, it is made up, so it
// follows one fixed, documented rule that a reader of the corpus can check:
//
//   - the context of every main-session call starts with SystemTokens (system
//     prompt and tool definitions; SubagentSystemTokens in subagent files);
//   - each piece of model-visible content adds its token count, made from its
//     length in bytes by a fixed ratio per content class (ProseChars for user
//     and assistant text, thinking and summaries; CodeChars for tool inputs and
//     tool results) plus a fixed framing cost per message and per block;
//     thinking sent back without text counts SignatureChars per token of its
//     signature;
//   - call k reports input + cache_read + cache_creation = the context it
//     sent; output = the tokens of its own content, which the next call sends
//     again, so context(k+1) = context(k) + output(k) + what came in between;
//   - cache_read is the prefix the previous call sent (its context minus its
//     uncached input); cache_creation is the rest. The first call of a session
//     reads SystemTokens from the cache (subagents read nothing); after a long
//     pause the cache has expired and only the system prefix is read;
//   - when the context to send reaches CompactAt, Claude Code compacts:
//     compact_boundary.preTokens is that context, and the next call sends
//     SystemTokens + the summary's tokens + what came after the boundary.
const (
	SystemTokens         = 21_500
	SubagentSystemTokens = 13_800
	CompactAt            = 167_000

	ProseChars     = 4.0 // bytes per token of natural-language text
	CodeChars      = 3.0 // bytes per token of tool inputs and outputs
	SignatureChars = 5.0 // signature bytes per token of encrypted thinking

	MessageTokens    = 4  // framing of every message
	BlockTokens      = 3  // framing of a text or thinking block
	ToolUseTokens    = 12 // framing of a tool_use block (id, name)
	ToolResultTokens = 8  // framing of a tool_result block
)

// proseTokens and codeTokens round up, so any non-empty text costs a token.
func proseTokens(n int) int64 { return ceilDiv(n, ProseChars) }
func codeTokens(n int) int64  { return ceilDiv(n, CodeChars) }

func ceilDiv(n int, per float64) int64 {
	if n <= 0 {
		return 0
	}
	t := int64(float64(n) / per)
	if float64(t)*per < float64(n) {
		t++
	}
	return t
}
