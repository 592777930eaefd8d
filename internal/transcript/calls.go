package transcript

// What an API call is (docs/metrics.md, "What a call is"). Every figure
// that counts calls counts these: the replay asks a strategy's trigger and
// the cost model bills a prompt before each one (runs.calls), and the calls
// table has one row per call. Rulers can only be judged on the measured
// ones.

// IsCall reports whether the message is an API call: one model response
// on the active path. The loaders make one assistant message per response
// (Claude Code's records of one message.id are merged) and leave out what
// the harness wrote in the model's name (Claude Code's <synthetic>
// notices), so every assistant message is a call, whether or not the
// recording kept its usage.
func (m *Message) IsCall() bool { return m.Role == RoleAssistant }

// Measured reports whether the message is a call whose usage was recorded
// with a real context above 0: the calls a ruler is compared with and an
// overhead can be taken from.
func (m *Message) Measured() bool { return m.IsCall() && m.Usage != nil && m.Usage.Context() > 0 }

// Calls returns the indices in Messages of the transcript's API calls, in
// order: call k of every table is Messages[Calls()[k]].
func (t *Transcript) Calls() []int {
	var out []int
	for i := range t.Messages {
		if t.Messages[i].IsCall() {
			out = append(out, i)
		}
	}
	return out
}
