// Package transcript is compactbench's canonical model of a recorded agent
// session: a Transcript holds the model-visible Messages of the active
// conversation, each made of Blocks, plus what the recording harness did on
// its own (recorded compactions) and what went wrong while loading it.
//
// Every reader in internal/loader produces this model and every strategy,
// rule and ruler consumes only it, never a format-specific struct. The
// package is pure: no I/O, no flags, no globals that change.
package transcript

import "strings"

// Role is the speaker of a Message.
type Role uint8

// Roles. RoleTool marks a message that carries only tool results (Claude Code
// writes them as user records; OpenAI-style logs as "tool" messages).
const (
	RoleSystem Role = iota
	RoleUser
	RoleAssistant
	RoleTool
)

// String returns the role's lower-case name.
func (r Role) String() string {
	switch r {
	case RoleSystem:
		return "system"
	case RoleUser:
		return "user"
	case RoleAssistant:
		return "assistant"
	case RoleTool:
		return "tool"
	}
	return "unknown"
}

// Kind says what a transcript file is relative to a session.
type Kind string

// Transcript kinds, as they appear in the transcripts table.
const (
	KindSession        Kind = "session"
	KindSubagent       Kind = "subagent"
	KindCompactionCall Kind = "compaction-call"
	KindSideQuestion   Kind = "side-question"
)

// Transcript is one recorded conversation: in Claude Code one file; in a
// Claude.ai export one conversation of the array.
type Transcript struct {
	// ID identifies the transcript: the session id for a session, "agent-<id>"
	// for a subagent, the conversation uuid for an export.
	ID string
	// Path is the source file as given on the command line (slash-separated).
	Path string
	// Format is the name of the reader that read it (loader registry).
	Format string
	// SessionID is the harness's session id, when it records one.
	SessionID string
	// ParentID is the parent session's id for subagent-like transcripts.
	ParentID string
	Kind     Kind
	// Model is the model that served most API calls on the active path.
	Model string
	// Messages are the active conversation in model-visible order. Recorded
	// compaction summaries are not among them (see Compactions).
	Messages []Message
	// Compactions are the compaction events the harness recorded, in order.
	Compactions []Compaction
	// Problems are the lines that could not be used, with the reason.
	Problems []Problem
	// Stats are file-level counts made while reading (all branches).
	Stats Stats
}

// Message is one model-visible message.
type Message struct {
	Role   Role
	Blocks []Block
	// UUID is the recording's id of the message's first record.
	UUID string
	// ID is the API message id of an assistant message (one API call).
	ID string
	// Timestamp is the recording's timestamp text of the first record.
	Timestamp string
	// Model is the model that produced an assistant message.
	Model string
	// Usage is set on assistant messages that were real API calls.
	Usage *Usage
	// IsMeta marks harness-injected user content (skill bodies, command
	// caveats, attachment reminders): model-visible, but not a user prompt.
	IsMeta bool
	// IsSidechain marks records of a subagent conversation.
	IsSidechain bool
	// Prompt, when set, is what a turn opened by this message shows as its
	// prompt instead of the message text: a slash command's name and
	// arguments ("/review src/"), whose recorded text is markup.
	Prompt string
	// Line is the 1-based source line of the message's first record.
	Line int
}

// Text returns the message's text blocks joined by newlines.
func (m *Message) Text() string {
	var parts []string
	for i := range m.Blocks {
		if m.Blocks[i].Kind == BlockText {
			parts = append(parts, m.Blocks[i].Text)
		}
	}
	return strings.Join(parts, "\n")
}

// HasToolResults reports whether the message carries any tool_result block.
func (m *Message) HasToolResults() bool {
	for i := range m.Blocks {
		if m.Blocks[i].Kind == BlockToolResult {
			return true
		}
	}
	return false
}

// Usage is what the API reported for one call.
type Usage struct {
	Input         int64
	Output        int64
	CacheRead     int64
	CacheCreation int64
}

// Context is the real size of the prompt the call sent:
// input + cache_read + cache_creation (docs/metrics.md, tokens).
func (u Usage) Context() int64 { return u.Input + u.CacheRead + u.CacheCreation }

// CompactionKind distinguishes full compactions from microcompactions.
type CompactionKind string

// Recorded compaction kinds.
const (
	CompactFull  CompactionKind = "compact"
	CompactMicro CompactionKind = "microcompact"
)

// Compaction is a compaction the recording harness performed.
type Compaction struct {
	Kind CompactionKind
	// Trigger is "auto" or "manual" as recorded.
	Trigger string
	// PreTokens is the harness's own count of the context before compacting.
	PreTokens int64
	// PostTokens is the harness's own count of the context right after a
	// full compaction, when it recorded one (0 otherwise).
	PostTokens int64
	// TokensSaved is recorded for microcompactions.
	TokensSaved int64
	// CompactedToolIDs are the tool_use ids whose results a microcompaction
	// cleared from what the model saw.
	CompactedToolIDs []string
	// MessageIndex is the number of Messages before the event: the event
	// happened between Messages[MessageIndex-1] and Messages[MessageIndex].
	MessageIndex int
	// Summary is the summary text the harness put in place of the history
	// (the isCompactSummary record), empty for microcompactions.
	Summary string
	// Line is the 1-based source line of the boundary record.
	Line int
}

// Problem is one input line that could not be used.
type Problem struct {
	// Line is 1-based; 0 means the problem concerns the whole file.
	Line   int
	Reason string
}

// Stats are counts over the whole file (every branch), made by the reader.
type Stats struct {
	// Lines is the number of records in the file: its lines for JSON lines
	// formats, the elements read as a unit for JSON documents (see the
	// loader's package doc). Every record is exactly one of parsed, ignored
	// or bad.
	Lines int
	// ParsedLines are lines read as conversation records or events.
	ParsedLines int
	// BadLines are lines that could not be used (each is also a Problem).
	BadLines int
	// IgnoredLines are lines skipped on purpose, by record type.
	IgnoredLines int
	// IgnoredByType counts IgnoredLines per record type.
	IgnoredByType map[string]int
	// APICalls counts distinct assistant message ids (model not <synthetic>).
	APICalls int
	// ToolCalls counts distinct tool_use ids.
	ToolCalls int
	// ToolErrors counts distinct tool_use ids whose result is an error.
	ToolErrors int
	// CompactBoundaries and MicrocompactBoundaries count recorded events.
	CompactBoundaries      int
	MicrocompactBoundaries int
	// PeakContextReal is the largest real context over all API calls.
	PeakContextReal int64
	// UnknownTypes counts records whose type the reader does not know
	// (ignored, and listed in IgnoredByType and the problems).
	UnknownTypes int
	// UnknownKeys counts keys, on records of known types, that the reader
	// does not know (a misspelling or a newer format; see the problems).
	UnknownKeys int
	// OffPath counts, per reason, the conversation records of the file's
	// scope that are not on the active path (an abandoned branch, a copy of
	// a record with the same uuid, ...).
	OffPath map[string]int
	// ProblemsUnlisted counts problems not in Problems, when a file had
	// more than the loader lists: len(Problems)+ProblemsUnlisted is the
	// total.
	ProblemsUnlisted int
}

// LeaveOut counts one conversation record left off the active path.
func (s *Stats) LeaveOut(reason string) {
	if s.OffPath == nil {
		s.OffPath = make(map[string]int)
	}
	s.OffPath[reason]++
}

// Ignore counts one line ignored because of its record type.
func (s *Stats) Ignore(recordType string) { s.IgnoreN(recordType, 1) }

// IgnoreN counts n lines ignored because of their record type (none when
// n <= 0).
func (s *Stats) IgnoreN(recordType string, n int) {
	if n <= 0 {
		return
	}
	if s.IgnoredByType == nil {
		s.IgnoredByType = make(map[string]int)
	}
	s.IgnoredByType[recordType] += n
	s.IgnoredLines += n
}

// FirstRunes returns s cut to its first n code points (the seeds'
// chars().take(n)); n <= 0 gives "".
func FirstRunes(s string, n int) string {
	i := 0
	for j := range s {
		if i == n {
			return s[:j]
		}
		i++
	}
	return s
}
