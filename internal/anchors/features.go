package anchors

import (
	"regexp"
	"strings"

	"github.com/compactbench/compactbench/internal/transcript"
)

// Features of a turn that rules test through the conditions changed, git
// and fail_then_pass, and that `inspect --digest` shows a reader.

// editTools are the tools whose successful call changes the file at its
// path (Claude Code, Codex, SWE-agent, OpenHands names).
var editTools = map[string]bool{
	"Edit": true, "Write": true, "MultiEdit": true, "NotebookEdit": true,
	"edit": true, "write": true, "apply_patch": true, "str_replace_editor": true,
	"str_replace_based_edit_tool": true, "create": true, "edit_file": true, "write_file": true,
}

// scratchPrefixes are directories whose files are scratch work, not a
// change to the project.
var scratchPrefixes = []string{"/tmp/", "/var/tmp/", "/private/tmp/", "/private/var/folders/", "/var/folders/", "/dev/", "$TMPDIR", "${TMPDIR", "%TEMP%", `C:\Windows\Temp`}

// IsScratchPath reports whether a path is under a temporary directory.
func IsScratchPath(p string) bool {
	p = strings.Trim(p, `"'`)
	for _, s := range scratchPrefixes {
		if strings.HasPrefix(p, s) || p+"/" == s {
			return true
		}
	}
	return strings.Contains(p, "/AppData/Local/Temp/") || strings.Contains(p, `\AppData\Local\Temp\`)
}

// patchFileRE finds the files an apply_patch body touches.
var patchFileRE = regexp.MustCompile(`(?m)^\*\*\* (?:Update|Add|Delete) File: (\S.*)$`)

// writeTargetRE finds files a shell command writes: redirections, tee,
// in-place sed/perl, touch, cp/mv destinations are approximated by their
// last argument.
var (
	redirectRE = regexp.MustCompile(`(?:^|[^0-9&<>])>>?\s*([^\s;&|<>()]+)`)
	teeRE      = regexp.MustCompile(`\btee\s+(?:-a\s+)?([^\s;&|<>()]+)`)
	inPlaceRE  = regexp.MustCompile(`\b(?:sed|perl)\s+(?:-[a-zA-Z]*\s+)*-[a-zA-Z]*i[a-zA-Z.]*\b[^;&|]*?\s([^\s;&|<>()'"]+)\s*(?:$|[;&|])`)
	touchCpRE  = regexp.MustCompile(`\b(?:touch|cp|mv|install|mkdir -p|mkdir|ln -s|git apply|patch)\s+(?:-[a-zA-Z]+\s+)*[^;&|]*?([^\s;&|<>()'"]+)\s*(?:$|[;&|])`)
)

// CommandWrites returns the files a shell command appears to write
// (redirections, tee, sed -i, touch, cp, mv, mkdir, git apply, apply_patch).
// It is a heuristic over the command text; /dev/null and scratch paths are
// left out by the caller through IsScratchPath.
func CommandWrites(cmd string) []string {
	var out []string
	if strings.Contains(cmd, "apply_patch") || strings.Contains(cmd, "*** Begin Patch") {
		for _, m := range patchFileRE.FindAllStringSubmatch(cmd, -1) {
			out = append(out, strings.TrimSpace(m[1]))
		}
	}
	// Heredoc bodies are data, not commands: only the first line of each
	// heredoc command counts.
	lines := strings.Split(cmd, "\n")
	var b strings.Builder
	heredoc := ""
	for _, l := range lines {
		if heredoc != "" {
			if strings.TrimSpace(l) == heredoc {
				heredoc = ""
			}
			continue
		}
		b.WriteString(l)
		b.WriteByte('\n')
		if i := strings.Index(l, "<<"); i >= 0 {
			w := strings.Fields(strings.TrimLeft(l[i+2:], "-~ "))
			if len(w) > 0 {
				heredoc = strings.Trim(w[0], `'"`)
			}
		}
	}
	s := b.String()
	for _, re := range []*regexp.Regexp{redirectRE, teeRE, inPlaceRE, touchCpRE} {
		for _, m := range re.FindAllStringSubmatch(s, -1) {
			p := strings.Trim(m[1], `"'`)
			if p == "" || p == "&1" || p == "&2" || strings.HasPrefix(p, "-") {
				continue
			}
			out = append(out, p)
		}
	}
	return out
}

// ChangedFiles returns the files the turn changed, in order, without
// duplicates: the paths of successful edit-tool calls and the files
// successful shell commands wrote, leaving out scratch paths under a
// temporary directory.
func ChangedFiles(t *transcript.Turn) []string {
	ok := map[string]bool{}
	for _, r := range t.ToolResults {
		if r.Success {
			ok[r.ID] = true
		}
	}
	var out []string
	seen := map[string]bool{}
	add := func(p string) {
		if p != "" && !seen[p] && !IsScratchPath(p) {
			seen[p] = true
			out = append(out, p)
		}
	}
	for _, c := range t.ToolCalls {
		if !ok[c.ID] {
			continue
		}
		switch {
		case editTools[c.Name]:
			if c.Path != "" {
				add(c.Path)
			} else {
				for _, m := range patchFileRE.FindAllStringSubmatch(c.Input, -1) {
					add(strings.TrimSpace(m[1]))
				}
			}
		case c.Command != "":
			for _, p := range CommandWrites(c.Command) {
				add(p)
			}
		}
	}
	return out
}

// Git milestone kinds that the git condition recognises in successful tool
// results.
const (
	GitCommit = "commit"
	GitPush   = "push"
	GitPR     = "pr"
	GitMerge  = "merge"
)

// GitKinds lists the git milestone kinds.
var GitKinds = []string{GitCommit, GitPush, GitPR, GitMerge}

var gitRE = map[string]*regexp.Regexp{
	// `[main 1a2b3c4] message`, `[feature/x (root-commit) 1a2b3c4] message`
	GitCommit: regexp.MustCompile(`(?m)^\[[^\]\s]+(?: \([a-z-]+\))? [0-9a-f]{7,40}\] \S`),
	// `   1a2b3c4..5d6e7f8  main -> main`, `* [new branch]      x -> x`
	GitPush: regexp.MustCompile(`(?m)^\s*(?:\+?\s*[0-9a-f]{7,40}\.\.\.?[0-9a-f]{7,40}|\* \[new (?:branch|tag)\])\s+\S+\s+->\s+\S+`),
	// a pull or merge request URL in a command's output
	GitPR: regexp.MustCompile(`https://(?:github\.com/[\w.-]+/[\w.-]+/pull|gitlab\.[\w.]+/[\w./-]+/-/merge_requests)/\d+`),
	// `Fast-forward`, `Merge made by the 'ort' strategy.`
	GitMerge: regexp.MustCompile(`(?m)^(?:Fast-forward$|Merge made by )`),
}

// GitMilestones returns the git milestone kinds (GitKinds order) that some
// successful tool result of the turn shows.
func GitMilestones(t *transcript.Turn) []string {
	var out []string
	for _, k := range GitKinds {
		for _, r := range t.ToolResults {
			if r.Success && gitRE[k].MatchString(r.Output) {
				out = append(out, k)
				break
			}
		}
	}
	return out
}

// FailThenPass reports whether a shell command of the turn failed and a
// later command of the same program (its first two words, after any `cd
// DIR &&`) succeeded in the same turn.
func FailThenPass(t *transcript.Turn) bool {
	cmds := map[string]string{}
	for _, c := range t.ToolCalls {
		if c.Command != "" {
			cmds[c.ID] = commandKey(c.Command)
		}
	}
	failed := map[string]bool{}
	for _, r := range t.ToolResults {
		k, ok := cmds[r.ID]
		if !ok || k == "" {
			continue
		}
		if !r.Success {
			failed[k] = true
		} else if failed[k] {
			return true
		}
	}
	return false
}

// commandKey is a command's program and first argument, after a leading
// `cd DIR &&` and environment assignments.
func commandKey(cmd string) string {
	cmd = strings.TrimSpace(cmd)
	for {
		if strings.HasPrefix(cmd, "cd ") {
			if i := strings.Index(cmd, "&&"); i >= 0 {
				cmd = strings.TrimSpace(cmd[i+2:])
				continue
			}
		}
		break
	}
	f := strings.Fields(cmd)
	for len(f) > 0 && strings.Contains(f[0], "=") {
		f = f[1:]
	}
	if len(f) > 2 {
		f = f[:2]
	}
	return strings.Join(f, " ")
}
