package loader

// recordClass says what a Claude Code record is to compactbench.
type recordClass uint8

const (
	// classContext records carry what the model sees: they become messages
	// (user, assistant) or injected blocks (attachments rendered into the
	// prompt).
	classContext recordClass = iota + 1
	// classBookkeeping records are the harness's own state (titles, modes,
	// snapshots, hook progress, timings): never context, set aside and
	// counted in ignored_types.
	classBookkeeping
	// classFact records are not context but state something worth
	// reporting: a recorded compaction (its trigger and the harness's own
	// pre/post token counts) becomes a transcript.Compaction.
	classFact
)

// ccTypes classifies every top-level record type Claude Code writes. The
// types "system" and "attachment" are classified per subtype
// (ccSystemSubtypes, ccAttachments). A type not listed here is counted in
// Stats.UnknownTypes and reported.
var ccTypes = map[string]recordClass{
	"user": classContext, "assistant": classContext,
	"system": classBookkeeping, "attachment": classContext,
	"progress": classBookkeeping, "file-history-snapshot": classBookkeeping,
	"file-history-delta": classBookkeeping, "queue-operation": classBookkeeping,
	"summary": classBookkeeping, "last-prompt": classBookkeeping,
	"permission-mode": classBookkeeping, "mode": classBookkeeping,
	"ai-title": classBookkeeping, "custom-title": classBookkeeping,
	"agent-name": classBookkeeping, "agent-setting": classBookkeeping,
	"bridge-session": classBookkeeping, "pr-link": classBookkeeping,
	"fork-context-ref": classBookkeeping, "frame-link": classBookkeeping,
	"tag": classBookkeeping,
}

// ccSystemSubtypes classifies the subtypes of "system" records.
var ccSystemSubtypes = map[string]recordClass{
	"compact_boundary": classFact, "microcompact_boundary": classFact,
	"api_error": classBookkeeping, "turn_duration": classBookkeeping,
	"stop_hook_summary": classBookkeeping, "local_command": classBookkeeping,
	"away_summary": classBookkeeping, "scheduled_task_fire": classBookkeeping,
	"informational": classBookkeeping, "hook_summary": classBookkeeping,
}

// ccAttachments classifies attachment records by attachment.type: the ones
// Claude Code renders into the prompt (as system reminders) are context,
// UI state is bookkeeping.
var ccAttachments = map[string]recordClass{
	"hook_success": classContext, "hook_additional_context": classContext,
	"hook_blocking_error": classContext, "hook_error": classContext,
	"hook_stopped_continuation": classContext, "skill_listing": classContext,
	"invoked_skills": classContext, "dynamic_skill": classContext,
	"deferred_tools_delta": classContext, "mcp_instructions_delta": classContext,
	"agent_listing_delta": classContext, "edited_text_file": classContext,
	"edited_image_file": classContext, "file": classContext, "directory": classContext,
	"compact_file_reference": classContext, "selected_lines_in_ide": classContext,
	"opened_file_in_ide": classContext, "todo_reminder": classContext,
	"task_reminder": classContext, "todo": classContext, "queued_command": classContext,
	"nested_memory": classContext, "memory": classContext, "plan_mode": classContext,
	"plan_mode_reentry": classContext, "plan_mode_exit": classContext,
	"plan_file_reference": classContext, "critical_system_reminder": classContext,
	"diagnostics": classContext, "output_style": classContext,
	"total_tokens_reminder": classContext, "budget_usd": classContext,
	"async_hook_response": classContext, "teammate_mailbox": classContext,
	"command_permissions": classContext, "read_truncation_notice": classContext,
	"ultrathink_effort": classContext, "auto_mode": classContext,
	"auto_mode_exit": classContext, "date_change": classContext,
	// UI state, never rendered into the prompt.
	"goal_status": classBookkeeping, "hook_cancelled": classBookkeeping,
	"hook_non_blocking_error": classBookkeeping, "hook_permission_decision": classBookkeeping,
	"hook_system_message": classBookkeeping, "structured_output": classBookkeeping,
}

// ccKnownKeys are the top-level keys Claude Code records carry. A key of a
// record of known type that is not listed counts in Stats.UnknownKeys.
var ccKnownKeys = setOf(
	"agentId", "agentName", "aiTitle", "apiErrorStatus", "attachment", "attributionAgent",
	"attributionPlugin", "attributionSkill", "backup", "cause", "classifierMetaLines",
	"compactMetadata", "content", "customTitle", "cwd", "data", "durationMs", "effort",
	"entrypoint", "error", "gitBranch", "hasOutput", "hookCount", "hookErrors", "hookInfos",
	"imagePasteIds", "interruptedMessageId", "isApiErrorMessage", "isCompactSummary", "isMeta",
	"isSidechain", "isSnapshotUpdate", "isVisibleInTranscriptOnly", "lastPrompt", "leafUuid",
	"level", "logicalParentUuid", "maxRetries", "message", "messageCount", "messageId", "mode",
	"operation", "origin", "parentToolUseID", "parentUuid", "permissionMode", "planContent",
	"preventedContinuation", "promptId", "promptSource", "requestId", "retryAttempt", "retryInMs",
	"sessionId", "session_id", "slug", "snapshot", "snapshotMessageId", "sourceToolAssistantUUID",
	"sourceToolUseID", "stopReason", "subtype", "summary", "thinkingMetadata", "timestamp",
	"todos", "toolDenialKind", "toolUseID", "toolUseResult", "trackingPath", "type", "userType",
	"uuid", "version", "microcompactMetadata", "sessionKind", "teamName", "isTeammate",
	"prUrl", "prNumber", "prRepository", "forkedFrom", "tag", "agentSetting", "bridgeSessionId",
	"frameId", "url", "costUSD", "isMcp",
)

// ccDeepKeys are the members of a record the reader reads below their top
// level (the others only as strings or booleans, or not at all): duplicate
// keys are looked for only in these (lastWinsTop). A member read deeper
// must be listed here.
var ccDeepKeys = setOf("message", "attachment", "compactMetadata", "microcompactMetadata")

// ccMessageKeys are the keys of a record's "message" object.
var ccMessageKeys = setOf(
	"container", "content", "context_management", "diagnostics", "id", "model", "role",
	"stop_details", "stop_reason", "stop_sequence", "type", "usage",
)

// The names of ccTypes, ccSystemSubtypes and ccAttachments, each mapped to
// itself: looking a name read as bytes up in them yields it as a string
// without allocating one.
var (
	ccTypeNames       = namesOf(ccTypes)
	ccSystemNames     = namesOf(ccSystemSubtypes)
	ccAttachmentNames = namesOf(ccAttachments)
)

// The keys of ccKnownKeys and ccMessageKeys, each mapped to itself.
var (
	ccKnownKeyNames   = namesOf(ccKnownKeys)
	ccMessageKeyNames = namesOf(ccMessageKeys)
)

// namesOf maps the keys of m to themselves.
func namesOf[V any](m map[string]V) map[string]string {
	names := make(map[string]string, len(m))
	for k := range m {
		names[k] = k
	}
	return names
}

// intern returns b as a string: the one in names when listed there.
func intern(names map[string]string, b []byte) string {
	if s, ok := names[string(b)]; ok {
		return s
	}
	return string(b)
}

func setOf(keys ...string) map[string]bool {
	m := make(map[string]bool, len(keys))
	for _, k := range keys {
		m[k] = true
	}
	return m
}
