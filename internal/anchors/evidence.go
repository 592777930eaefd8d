package anchors

import (
	"fmt"
	"strings"
	"sync"

	"github.com/valyala/fastjson"

	"github.com/compactbench/compactbench/internal/transcript"
)

// EvidenceKind names a source of evidence labels: facts of the recording
// that mark an anchor, found without any rule set.
type EvidenceKind string

// Evidence kinds. Each lands on one turn and stands for one anchor type:
//
//   - todo (task-completion): a TodoWrite call whose todo list marks an item
//     "completed" that the previous TodoWrite list of the transcript did not
//     (items are identified by their content text; on the first list every
//     completed item counts). Lands on the turn holding the call.
//   - commit (feature-milestone): a successful Bash call running
//     `git … commit` whose output holds git's summary line
//     "[branch abc1234] …" (so backgrounded, refused and hook-rejected
//     commits do not count). Lands on the turn holding the call.
//   - test-fix (error-resolution): a test command (go test, pytest, cargo
//     test, npm/yarn/pnpm/bun test, jest, vitest, mix test, rspec, phpunit,
//     make test, ctest, dotnet/gradle/mvn test, tox) that passes in a turn
//     after the same runner failed in an EARLIER turn and had not passed
//     since. A run fails when its result is an error or its output reports
//     failures (piped commands exit 0); it passes when neither; backgrounded,
//     refused and interrupted runs are neither. Lands on the turn of the
//     passing run.
//   - compaction (user-checkpoint): a full compaction Claude Code recorded
//     (compact_boundary, auto or manual; microcompactions excluded). Lands on
//     the turn holding the last message before the boundary: the turn during
//     which the context was cut.
//
// A turn gets at most one label per kind.
const (
	EvidenceTodo       EvidenceKind = "todo"
	EvidenceCommit     EvidenceKind = "commit"
	EvidenceTestFix    EvidenceKind = "test-fix"
	EvidenceCompaction EvidenceKind = "compaction"
)

// EvidenceKinds lists every kind, in a fixed order.
var EvidenceKinds = []EvidenceKind{EvidenceTodo, EvidenceCommit, EvidenceTestFix, EvidenceCompaction}

// EvidenceType is the anchor type each kind stands for.
var EvidenceType = map[EvidenceKind]Type{
	EvidenceTodo:       TaskCompletion,
	EvidenceCommit:     FeatureMilestone,
	EvidenceTestFix:    ErrorResolution,
	EvidenceCompaction: UserCheckpoint,
}

// ParseEvidenceKinds reads a comma-separated list of kinds; "all" is every
// kind and "none" (or "") is no evidence.
func ParseEvidenceKinds(s string) ([]EvidenceKind, error) {
	s = strings.TrimSpace(s)
	switch s {
	case "all":
		return append([]EvidenceKind(nil), EvidenceKinds...), nil
	case "none", "":
		return nil, nil
	}
	seen := map[EvidenceKind]bool{}
	for _, part := range strings.Split(s, ",") {
		k := EvidenceKind(strings.TrimSpace(part))
		if _, ok := EvidenceType[k]; !ok {
			names := make([]string, len(EvidenceKinds))
			for i, k := range EvidenceKinds {
				names[i] = string(k)
			}
			return nil, fmt.Errorf("unknown evidence kind %q (known: %s, all, none)", part, strings.Join(names, ", "))
		}
		seen[k] = true
	}
	// Keep the canonical order so the configuration hash does not depend on
	// how the list was written.
	var ordered []EvidenceKind
	for _, k := range EvidenceKinds {
		if seen[k] {
			ordered = append(ordered, k)
		}
	}
	return ordered, nil
}

// Evidence is one evidence label.
type Evidence struct {
	Turn int
	Type Type
	Kind EvidenceKind
	// Note says what was seen ("2 todos completed", "[main 1a2b3c4] …").
	Note string
}

// DeriveEvidence finds the evidence labels of a transcript whose turns are
// turns (t.Turns()), for the given kinds, ordered by turn then kind.
func DeriveEvidence(t *transcript.Transcript, turns []transcript.Turn, kinds []EvidenceKind) []Evidence {
	want := map[EvidenceKind]bool{}
	for _, k := range kinds {
		want[k] = true
	}
	var out []Evidence
	add := func(turn int, k EvidenceKind, note string) {
		for i := len(out) - 1; i >= 0 && out[i].Turn == turn; i-- {
			if out[i].Kind == k {
				return
			}
		}
		out = append(out, Evidence{Turn: turn, Type: EvidenceType[k], Kind: k, Note: note})
	}
	var todo todoState
	var cmds commandIndex
	tests := map[string]int{} // runner -> first turn of its unresolved failure
	var p fastjson.Parser
	compactAt := compactionTurns(t, turns)
	for i := range turns {
		tr := &turns[i]
		if want[EvidenceTodo] {
			n := 0
			for j := range tr.ToolCalls {
				if c := &tr.ToolCalls[j]; c.ToolKind() == transcript.ToolTodo {
					n += todo.update(&p, c.Input)
				}
			}
			if n > 0 {
				add(i, EvidenceTodo, plural(n, "todo")+" completed")
			}
		}
		if want[EvidenceCommit] || want[EvidenceTestFix] {
			cmds.reset(tr)
			var fixed []string
			for j := range tr.ToolResults {
				r := &tr.ToolResults[j]
				cmd := cmds.command(r.ID)
				if cmd == "" {
					continue
				}
				if want[EvidenceCommit] && r.Success && strings.Contains(cmd, "commit") && gitCommitRE.MatchString(cmd) {
					if m := commitLineRE.FindString(r.Output); m != "" {
						add(i, EvidenceCommit, strings.TrimSpace(m))
					}
				}
				if want[EvidenceTestFix] {
					runner := testRunner(cmd)
					if runner == "" {
						continue
					}
					switch testVerdict(r) {
					case verdictFail:
						if _, ok := tests[runner]; !ok {
							tests[runner] = i
						}
					case verdictPass:
						if since, ok := tests[runner]; ok {
							if since < i {
								fixed = append(fixed, fmt.Sprintf("%s fixed (failing since turn %d)", runner, since))
							}
							delete(tests, runner)
						}
					}
				}
			}
			if len(fixed) > 0 {
				add(i, EvidenceTestFix, strings.Join(fixed, "; "))
			}
		}
		if want[EvidenceCompaction] && len(compactAt[i]) > 0 {
			add(i, EvidenceCompaction, strings.Join(compactAt[i], "; "))
		}
	}
	return out
}

// compactionTurns maps turn index to notes of the full compactions recorded
// during that turn.
func compactionTurns(t *transcript.Transcript, turns []transcript.Turn) map[int][]string {
	out := map[int][]string{}
	if len(turns) == 0 {
		return out
	}
	for _, c := range t.Compactions {
		if c.Kind != transcript.CompactFull {
			continue
		}
		last := c.MessageIndex - 1
		turn := 0
		for k := range turns {
			if turns[k].Start <= last {
				turn = k
			}
		}
		trigger := c.Trigger
		if trigger == "" {
			trigger = "unknown"
		}
		out[turn] = append(out[turn], fmt.Sprintf("compaction (%s, %d tokens)", trigger, c.PreTokens))
	}
	return out
}

func plural(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return fmt.Sprintf("%d %ss", n, word)
}

// todoState is the last TodoWrite list seen: item content -> status.
type todoState struct{ status map[string]string }

// update applies a TodoWrite input and returns how many items it newly
// marks completed.
func (s *todoState) update(p *fastjson.Parser, input string) int {
	v, err := p.Parse(input)
	if err != nil {
		return 0
	}
	items := v.GetArray("todos")
	if items == nil {
		return 0
	}
	next := make(map[string]string, len(items))
	n := 0
	for _, it := range items {
		content := string(it.GetStringBytes("content"))
		status := string(it.GetStringBytes("status"))
		next[content] = status
		if status == "completed" && s.status[content] != "completed" {
			n++
		}
	}
	s.status = next
	return n
}

var (
	// gitCommitRE: git, optional global options (-C dir, -c k=v,
	// --no-pager…), then the commit subcommand.
	gitCommitRE = lazyRE(`(^|[\s;&|(])git(\s+(-[cC]\s+\S+|--\S+))*\s+commit\b`)
	// commitLineRE: git's summary line "[main 1a2b3c4] msg",
	// "[main (root-commit) 1a2b3c4] msg", "[detached HEAD 1a2b3c4] msg".
	commitLineRE = lazyRE(`(?m)^\[[^\]\n]*\b[0-9a-f]{7,40}\] [^\n]*`)
	// testRunnerRE finds a test runner in a shell command.
	testRunnerRE = lazyRE(`(^|[\s;&|(/])(go test|python3? -m pytest|pytest|py\.test|cargo (?:nextest run|test)|(?:npm|pnpm|yarn|bun) (?:run )?test|npx (?:jest|vitest)|jest|vitest|mix test|(?:bundle exec )?rspec|phpunit|make (?:test|check)|ctest|dotnet test|(?:\./)?gradlew? test|mvn test|tox)\b`)
	// failureRE: a test run's output reporting failures.
	failureRE = lazyRE(`(?m)^(FAIL\b|FAILED\b|--- FAIL)|\b[1-9][0-9]* (failed|failures?|errors?|failing)\b|\btest result: FAILED\b|\bTests? failed\b`)
)

// Literal prefilters: Go's regexp scans the whole text for these
// alternations, and most commands and outputs hold none of the literals.
// They are built on first use, not at process start.
var (
	testRunnerPre = sync.OnceValue(func() *prefilter { return newPrefilter(testRunnerRE.String(), false) })
	failurePre    = sync.OnceValue(func() *prefilter { return newPrefilter(failureRE.String(), false) })
)

// testRunner returns the normalised test runner a command invokes, or "".
func testRunner(cmd string) string {
	if !testRunnerPre().mayMatch(&text{s: cmd}) {
		return ""
	}
	m := testRunnerRE.FindStringSubmatch(cmd)
	if m == nil {
		return ""
	}
	r := m[2]
	r = strings.Replace(r, "python3 -m pytest", "pytest", 1)
	r = strings.Replace(r, "python -m pytest", "pytest", 1)
	r = strings.Replace(r, " run test", " test", 1)
	return r
}

// notRun open results of commands that did not run to completion in the
// foreground: backgrounded, refused by the user, interrupted.
var notRun = []string{
	"Command running in background", "Command was manually backgrounded",
	"The user doesn't want to", "[Request interrupted",
}

type verdict uint8

const (
	verdictNone verdict = iota
	verdictPass
	verdictFail
)

// testVerdict classifies a test command's result.
func testVerdict(r *transcript.ToolResult) verdict {
	out := r.Output
	for _, p := range notRun {
		if strings.HasPrefix(out, p) {
			return verdictNone
		}
	}
	if !r.Success || failurePre().match(failureRE.re(), &text{s: out}) {
		return verdictFail
	}
	return verdictPass
}
