package anchors

import (
	"slices"
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
	return (&contexts{turns: turns}).fold(0, len(turns))
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

// contexts computes the turnContext of every turn once, on first use, and
// indexes them so that the PreservationContext of any window of turns costs
// a pass over the window's files and goals only; the evaluations of one
// Suite.Evaluate call share it.
type contexts struct {
	once  sync.Once
	turns []transcript.Turn
	ctx   []turnContext
	// errs are every turn's errors in turn order; turn i's are
	// errs[errAt[i]:errAt[i+1]].
	errs  []string
	errAt []int32
	// files are every turn's files in turn order (turn i's from fileAt[i]);
	// filePrev[j] is the position in files of the previous occurrence of
	// files[j] (-1 for none), so files[j] is new in a window exactly when
	// filePrev[j] is before the window's first file.
	files    []string
	fileAt   []int32
	filePrev []int32
	// build[i] is the last turn at or before i with a decisive result
	// (-1 for none).
	build []int32
	// goals are the turns with a goal, in order; goalPrev[k] is the
	// position in goals of the previous turn with the same goal (-1).
	goals    []int32
	goalPrev []int32
}

func (c *contexts) get() []turnContext {
	c.once.Do(c.index)
	return c.ctx
}

func (c *contexts) index() {
	n := len(c.turns)
	c.ctx = make([]turnContext, n)
	var lower []byte // scratch for lower-cased tool outputs
	nerr, nfile := 0, 0
	for i := range c.turns {
		c.ctx[i] = contextOf(&c.turns[i], &lower)
		nerr += len(c.ctx[i].errors)
		nfile += len(c.ctx[i].files)
	}
	c.errAt = make([]int32, n+1)
	c.fileAt = make([]int32, n+1)
	c.build = make([]int32, n)
	if nerr > 0 {
		c.errs = make([]string, 0, nerr)
	}
	c.files = make([]string, 0, nfile)
	c.filePrev = make([]int32, 0, nfile)
	lastFile := make(map[string]int32)
	lastGoal := make(map[string]int32)
	build := int32(-1)
	for i := range c.ctx {
		tc := &c.ctx[i]
		c.errAt[i], c.fileAt[i] = int32(len(c.errs)), int32(len(c.files))
		c.errs = append(c.errs, tc.errors...)
		for _, f := range tc.files {
			prev, ok := lastFile[f]
			if !ok {
				prev = -1
			}
			lastFile[f] = int32(len(c.files))
			c.files = append(c.files, f)
			c.filePrev = append(c.filePrev, prev)
		}
		if tc.build != BuildUnknown {
			build = int32(i)
		}
		c.build[i] = build
		if tc.isGoal {
			prev, ok := lastGoal[tc.goal]
			if !ok {
				prev = -1
			}
			lastGoal[tc.goal] = int32(len(c.goals))
			c.goals = append(c.goals, int32(i))
			c.goalPrev = append(c.goalPrev, prev)
		}
	}
	c.errAt[n], c.fileAt[n] = int32(len(c.errs)), int32(len(c.files))
}

// fold is the PreservationContext of turns[from:to]. Its ErrorStates share
// the index's memory (capacity clipped, so appending copies).
func (c *contexts) fold(from, to int) PreservationContext {
	c.get()
	pc := PreservationContext{BuildStatus: BuildUnknown, LastUserIntent: "Continue conversation"}
	if to <= from {
		pc.ActiveFiles, pc.CurrentGoals, pc.ErrorStates = []string{}, []string{}, []string{}
		return pc
	}
	f0, f1 := c.fileAt[from], c.fileAt[to]
	nf := 0
	for j := f0; j < f1; j++ {
		if c.filePrev[j] < f0 {
			nf++
		}
	}
	pc.ActiveFiles = make([]string, 0, nf)
	for j := f0; j < f1; j++ {
		if c.filePrev[j] < f0 {
			pc.ActiveFiles = append(pc.ActiveFiles, c.files[j])
		}
	}
	pc.ErrorStates = []string{}
	if e0, e1 := c.errAt[from], c.errAt[to]; e1 > e0 {
		pc.ErrorStates = c.errs[e0:e1:e1]
	}
	if b := c.build[to-1]; b >= int32(from) {
		pc.BuildStatus = c.ctx[b].build
	}
	// The goals are the distinct goals in the order of their first turn in
	// the window, the last 3 kept: walk back over the window's goal turns
	// and keep those whose goal does not occur earlier in the window.
	g0, _ := slices.BinarySearch(c.goals, int32(from))
	g1, _ := slices.BinarySearch(c.goals, int32(to))
	var keep [3]int32
	nk := 0
	for k := g1 - 1; k >= g0 && nk < len(keep); k-- {
		if c.goalPrev[k] < int32(g0) {
			keep[nk] = c.goals[k]
			nk++
		}
	}
	pc.CurrentGoals = make([]string, nk)
	for k := 0; k < nk; k++ {
		pc.CurrentGoals[nk-1-k] = c.ctx[keep[k]].goal
	}
	pc.LastUserIntent = transcript.FirstRunes(c.turns[to-1].UserMessage, 200)
	return pc
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

// contextOf computes a turn's context; lower is scratch space for
// lower-cased tool outputs.
func contextOf(t *transcript.Turn, lower *[]byte) turnContext {
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
		out := lowerInto(lower, r.Output)
		if strings.Contains(out, "test") {
			if strings.Contains(out, "pass") || strings.Contains(out, "success") {
				c.build = BuildPassing
			} else if strings.Contains(out, "fail") || strings.Contains(out, "error") {
				c.build = BuildFailing
			}
		}
	}
	user := lowerInto(lower, t.UserMessage)
	for _, m := range goalMarkers {
		if strings.Contains(user, m) {
			first, _, _ := strings.Cut(t.UserMessage, ".")
			c.goal, c.isGoal = transcript.FirstRunes(first, 100), true
			break
		}
	}
	return c
}
