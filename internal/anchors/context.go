package anchors

import (
	"strings"
	"sync"

	"github.com/compactbench/compactbench/internal/transcript"
)

// BuildStatus is the build state a PreservationContext records.
type BuildStatus string

// Build states (seed 000's BuildStatus, docs/strategies.md).
const (
	BuildPassing BuildStatus = "passing"
	BuildFailing BuildStatus = "failing"
	BuildUnknown BuildStatus = "unknown"
)

// PreservationContext is the state a summary must carry (seed 000,
// BR-006), extracted from turns exactly as the seed's
// extract_from_turns does:
//
//   - ActiveFiles: the file of every tool call that names one, first
//     appearance order, no duplicates (see callFile);
//   - CurrentGoals: for each user message whose lower-cased text contains
//     "help me", "i want to", "i need to" or "please", the text up to its
//     first '.', cut to 100 characters, without duplicates; the last 3 kept;
//   - ErrorStates: the first line of every failed tool result, cut to 100
//     characters (every one, duplicates included; empty outputs add none);
//   - BuildStatus: over all tool results in order, one whose lower-cased
//     output contains "test" sets passing when it also contains "pass" or
//     "success", else failing when it contains "fail" or "error"; the last
//     such result wins; unknown when none;
//   - LastUserIntent: the last turn's user message cut to 200 characters
//     ("Continue conversation" when there are no turns).
//
// Characters are Unicode code points (Rust's chars()).
type PreservationContext struct {
	ActiveFiles    []string
	CurrentGoals   []string
	ErrorStates    []string
	BuildStatus    BuildStatus
	LastUserIntent string
}

// ExtractContext computes the PreservationContext of turns.
func ExtractContext(turns []transcript.Turn) PreservationContext {
	c := &contexts{turns: turns}
	return foldContext(c.get(), turns, c.errorsOf(0, len(turns)))
}

// Format renders the context as seed 000's format_for_summary:
// "Active files: …\nGoals: …\nBuild: …", with "None" and "Continue
// conversation" for empty lists.
func (c *PreservationContext) Format() string {
	files := "None"
	if len(c.ActiveFiles) > 0 {
		files = strings.Join(c.ActiveFiles, ", ")
	}
	goals := "Continue conversation"
	if len(c.CurrentGoals) > 0 {
		goals = strings.Join(c.CurrentGoals, "; ")
	}
	return "Active files: " + files + "\nGoals: " + goals + "\nBuild: " + string(c.BuildStatus)
}

// FormatCodelet renders the context as seed 001's preserveContext: the same
// three lines with empty lists left empty.
func (c *PreservationContext) FormatCodelet() string {
	return "Active files: " + strings.Join(c.ActiveFiles, ", ") + "\nGoals: " + strings.Join(c.CurrentGoals, "; ") +
		"\nBuild: " + string(c.BuildStatus)
}

// turnContext is what one turn contributes to a PreservationContext.
type turnContext struct {
	files  []string
	errors []string
	build  BuildStatus // the turn's last decisive result, or unknown
	goal   string
	isGoal bool
}

// contexts computes the turnContext of every turn once, on first use; the
// evaluations of one Suite.Evaluate call share it.
type contexts struct {
	once  sync.Once
	turns []transcript.Turn
	ctx   []turnContext
	// errs are every turn's errors in order, turn i's from errAt[i] to
	// errAt[i+1]: the ErrorStates of a range of turns, without copying.
	errs  []string
	errAt []int
}

func (c *contexts) get() []turnContext {
	c.once.Do(func() {
		c.ctx = make([]turnContext, len(c.turns))
		c.errAt = make([]int, len(c.turns)+1)
		for i := range c.turns {
			c.ctx[i] = contextOf(&c.turns[i])
			c.errs = append(c.errs, c.ctx[i].errors...)
			c.errAt[i+1] = len(c.errs)
		}
	})
	return c.ctx
}

// callFile is the seeds' ToolCall::filename(): the file a call works on
// (file_path, notebook_path or path of its input), except for search tools
// (transcript.ToolSearch), whose path is a directory to search.
func callFile(c *transcript.ToolCall) string {
	if c.ToolKind() == transcript.ToolSearch {
		return ""
	}
	return c.Path
}

// goalMarkers are the seed's goal indicators, matched on lower-cased text.
var goalMarkers = []string{"help me", "i want to", "i need to", "please"}

func contextOf(t *transcript.Turn) turnContext {
	var c turnContext
	for i := range t.ToolCalls {
		if f := callFile(&t.ToolCalls[i]); f != "" {
			c.files = append(c.files, f)
		}
	}
	c.build = BuildUnknown
	for i := range t.ToolResults {
		r := &t.ToolResults[i]
		if !r.Success && r.Output != "" {
			line, _, nl := strings.Cut(r.Output, "\n")
			if nl { // Rust's lines() drops the \r of a \r\n ending only
				line = strings.TrimSuffix(line, "\r")
			}
			c.errors = append(c.errors, transcript.FirstRunes(line, 100))
		}
		lower := lowerForASCII(r.Output)
		if strings.Contains(lower, "test") {
			if strings.Contains(lower, "pass") || strings.Contains(lower, "success") {
				c.build = BuildPassing
			} else if strings.Contains(lower, "fail") || strings.Contains(lower, "error") {
				c.build = BuildFailing
			}
		}
	}
	lower := lowerForASCII(t.UserMessage)
	for _, m := range goalMarkers {
		if strings.Contains(lower, m) {
			first, _, _ := strings.Cut(t.UserMessage, ".")
			c.goal, c.isGoal = transcript.FirstRunes(first, 100), true
			break
		}
	}
	return c
}

// lowerForASCII returns s lower-cased for looking up ASCII needles: every
// ASCII string occurs in it exactly when it occurs in strings.ToLower(s).
// Lower-casing maps ASCII letters to ASCII and every other rune to non-ASCII
// runes, except U+0130 (İ) and U+212A (KELVIN SIGN), which become 'i' and
// 'k'; without them, folding the ASCII letters (asciiLower, no copy when
// there is no capital) gives the same answers as the full Unicode mapping at
// a fraction of its cost on long tool outputs.
func lowerForASCII(s string) string {
	if strings.Contains(s, "\u0130") || strings.Contains(s, "\u212a") {
		return strings.ToLower(s)
	}
	return asciiLower(s)
}

// errorsOf are the errors of turns [from, to), in order; the list is
// shared: appending to it copies.
func (c *contexts) errorsOf(from, to int) []string {
	c.get()
	a, b := c.errAt[from], c.errAt[to]
	if a == b {
		return []string{}
	}
	return c.errs[a:b:b]
}

// foldContext folds the turn contexts cs of turns into their
// PreservationContext; errs are their errors (contexts.errorsOf).
func foldContext(cs []turnContext, turns []transcript.Turn, errs []string) PreservationContext {
	pc := PreservationContext{BuildStatus: BuildUnknown, ActiveFiles: []string{}, CurrentGoals: []string{}, ErrorStates: errs}
	seen := map[string]bool{}
	for i := range cs {
		c := &cs[i]
		for _, f := range c.files {
			if !seen[f] {
				seen[f] = true
				pc.ActiveFiles = append(pc.ActiveFiles, f)
			}
		}
		if c.build != BuildUnknown {
			pc.BuildStatus = c.build
		}
		if c.isGoal {
			dup := false
			for _, g := range pc.CurrentGoals {
				if g == c.goal {
					dup = true
					break
				}
			}
			if !dup {
				pc.CurrentGoals = append(pc.CurrentGoals, c.goal)
			}
		}
	}
	if n := len(pc.CurrentGoals); n > 3 {
		pc.CurrentGoals = pc.CurrentGoals[n-3:]
	}
	pc.LastUserIntent = "Continue conversation"
	if len(turns) > 0 {
		pc.LastUserIntent = transcript.FirstRunes(turns[len(turns)-1].UserMessage, 200)
	}
	return pc
}
