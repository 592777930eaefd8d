// Package compaction replays a recorded session through context-compaction
// strategies and measures what each would have done.
//
// # Replay (open loop)
//
// Replay walks the recording in order. Before each recorded API call the
// simulated prompt is the fixed overhead (system prompt and tools, which no
// transcript records: the first call's real context minus the metric
// ruler's count of the messages before it) plus the strategy's current
// context. The messages recorded since the previous call are appended, the
// strategy's trigger is asked, and if it fires the strategy compacts: its
// context is replaced by what it keeps plus what it writes (a summary). The
// future is the recording's: the agent's later behaviour does not change
// with the strategy, so the replay measures what each strategy keeps and
// loses, not how the agent would have adapted. ModeOnce instead compacts
// the whole transcript once, at its end, as the seeds' worked examples do.
//
// # Strategies
//
// Each strategy (see Specs) has a trigger counted with its own ruler and
// window, as its source system counts; a selection of what stays verbatim;
// a deterministic summarizer (the Summarizer interface lets an LLM-backed
// one plug in); and state carried across rounds (the previous summary,
// cumulative file lists, the round number).
//
// # Metrics (the contracts of docs/metrics.md)
//
// Per event: tokens_before and tokens_after are conversation tokens by the
// metric ruler (overhead excluded) just before and after the compaction;
// compression_ratio = (before − after) / before; low_compression = ratio <
// 0.60 (BR-005). orphan_results counts tool_result blocks whose tool_use is
// not in the compacted context, dangling_calls tool_use blocks without
// their result: either makes the compacted context an invalid API request.
// Pairs the recording itself had already lost (reported by the loader) are
// not counted. need_recall is described in facts.go; file_recall,
// error_recall and intent_kept in metrics.go.
//
// Per transcript × strategy: compactions; overflows (simulated calls whose
// prompt exceeds the window: the strategy did not act in time); peak and
// final prompt size (overhead included); tokens_processed (the sum of the
// prompts of every call); cost_ratio (cost.go) against the replay without
// compaction; thrash (compactions that free less than 10 % of the context or
// come within 2 calls of the previous one).
//
// The package is pure: no I/O, no flags, no output.
package compaction
