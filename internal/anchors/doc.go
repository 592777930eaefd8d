// Package anchors detects anchor turns: the turns of a conversation that a
// compaction should keep from (an error fixed and verified, a task done, a
// user's change of direction, a feature milestone). It follows seeds 000 and
// 001 (docs/strategies.md gives their rules and constants).
//
// # Rules are data
//
// A RuleSet is parsed from YAML (see Parse and the embedded sets under
// rulesets/: codelet, fspec, tuned). A rule has a name, an anchor Type, a
// weight, a confidence and conditions over one transcript.Turn:
//
//	previous_error  the turn's PreviousError flag
//	call            some tool call of the turn matches (tool names, command,
//	                path, input JSON; `min: N` for at least N calls)
//	result          some tool result of the turn matches (tool, success,
//	                output, the command of its call, last result only;
//	                `min: N` for at least N results)
//	user, response  the user message / the assistant response matches
//	next_user       the next turn's prompt matches; at the end of a window
//	                (a compaction point in replay) the next prompt is not
//	                recorded yet, so it is tested as empty there (never the
//	                future)
//	changed         true: the turn changed something outside a temp dir (a
//	                successful edit-tool call, a file a command wrote, a
//	                machine-changing command such as brew install or
//	                systemctl restart; ChangedFiles)
//	checked         true: after its first change, a command that changes
//	                nothing ran successfully (a test, build, run, request or
//	                listing looked at the result)
//	git             a successful result shows a git milestone: commit (a
//	                commit header "[main 1a2b3c4] msg"), push (a ref update
//	                "1a2b..5d6e  main -> main"), pr (a pull/merge request
//	                URL), merge ("Fast-forward")
//	fail_then_pass  true: a command failed and a later run of the same
//	                program passed within the turn
//	fixed_in_turn   true: a command failed, the turn then changed something
//	                (as for changed) and the same command passed afterwards:
//	                a failure fixed and the fix confirmed within the turn
//	exercised       true: after the turn's first change, a command that
//	                runs it passed: a test, build, run or request, not a
//	                read-only look (ls, cat, grep, git status/diff/log) and
//	                not a change itself
//	passes_again    true: a program whose last run in the previous turn
//	                failed (a failure that turn left unresolved) runs
//	                successfully in this turn, whoever fixed it; read-only
//	                probes (ls, grep, cat...) and pipelines ending in one do
//	                not count; looks only at the previous turn, never ahead
//	all, any, not   composition
//
// Text matchers (contains, regex, longer_than, shorter_than, all/any/not)
// state their case sensitivity explicitly: `case: sensitive` or
// `case: insensitive` is required on every contains and regex. A
// case-insensitive contains is "the lower-cased text contains the lower-cased
// needle", as the seeds write it; for ASCII needles only ASCII letters of the
// text are folded (so KELVIN SIGN does not match "k"). Regexes are Go RE2;
// (?i) folding applies to case-insensitive ones.
//
// `says: LEXICON` (or a list) tests what a text says in English, Chinese,
// Japanese, Korean and Spanish: done, approval, go-ahead, direction, handoff,
// success, failure (see lexicon.go). It matches in prose only (fenced and
// inline code, indented output, identifiers and paths are skipped: is_done,
// done.txt and markDone() do not say done), case-insensitively, and not
// when negated ("NOT complete", "isn't fixed", "未完成", "되지 않").
//
// # Detection
//
// Every rule is evaluated on every turn. A rule "matches" a turn when its
// conditions hold; it "fires" when it matches, its confidence is at least the
// rule set's threshold (BR-001), and no earlier rule of the set fired on the
// turn: rules are tried in file order and a turn has at most one anchor, as in
// the seeds' detect(). A rule whose confidence is below the threshold can
// never fire; Rule.BelowThreshold says so and the reports show it.
//
// When no rule fires on any turn, a rule set with a synthetic fallback
// (BR-004 of seed 000) adds a synthetic anchor at the last turn.
//
// Turn indices are 0-based positions in the turn list given to Evaluate (or
// in the from:to window given to Evaluation.Flow).
//
// For a compaction engine: evaluate once per transcript, then ask for any
// window of turns per compaction round without re-reading text:
//
//	set, err := anchors.Resolve(nameOrFile, os.ReadFile) // or anchors.Builtin
//	ev := set.Evaluate(turns)       // every rule on every turn, once
//	flow := ev.Flow(from, to)       // anchors, synthetic anchor, PreservationContext
//	text := anchors.WeightedSummary(turns[from:to], flow.Anchors, &flow.Context, anchors.StyleFSpec)
//
// NewSuite evaluates several sets at once, sharing their text searches.
// Each distinct text test is answered at most once per text (memoised), and
// regexes run only when a literal they need occurs in the text.
//
// # Labels and scoring
//
// Gold labels come from label files (ParseLabels); evidence labels are
// derived from the recording itself, without any rule set (DeriveEvidence:
// TodoWrite items completed, successful git commits, a test runner passing
// after failing in an earlier turn, Claude Code's own compactions; see
// EvidenceKind for where each lands and which type it stands for). A
// detected anchor matches a label at the same turn of the same transcript;
// per-type figures also require the same type. See score.go for the exact
// counting.
//
// The package is pure: it reads no files (Resolve takes a read function),
// writes nothing, and keeps no mutable globals.
package anchors
