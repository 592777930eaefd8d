package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/compactbench/compactbench/internal/anchors"
	"github.com/compactbench/compactbench/internal/transcript"
)

// digestLines is how many of the reply's last lines the digest shows.
const digestLines = 4

// digest prints, per turn, what a person labelling anchors decides from:
// the prompt (with its recorded id and time, which labels carry), the
// files changed, every command with ✓/✗, git milestones, other tools, the
// reply's last lines and the next prompt's head. It shows no rule output,
// so a labeller is not led by what a rule set detects.
func digest(t *transcript.Transcript, turns []transcript.Turn, only int, w io.Writer) error {
	fmt.Fprintf(w, "%s  (%s, %s, id %s): %d turns\n", t.Path, t.Format, t.Kind, t.ID, len(turns))
	if only >= len(turns) {
		return usageErr("--turn %d: the transcript has %d turns", only, len(turns))
	}
	for i := range turns {
		if only >= 0 && i != only {
			continue
		}
		tr := &turns[i]
		fmt.Fprintf(w, "\n── turn %d  uuid %s  at %s\n", i, orDash(tr.PromptUUID), orDash(tr.PromptTime))
		fmt.Fprintf(w, "  prompt: %s\n", head(tr.UserMessage, 300))
		if files := anchors.ChangedFiles(tr); len(files) > 0 {
			fmt.Fprintf(w, "  changed: %s\n", strings.Join(files, ", "))
		}
		digestTools(tr, w)
		if g := anchors.GitMilestones(tr); len(g) > 0 {
			fmt.Fprintf(w, "  git: %s\n", strings.Join(g, ", "))
		}
		if anchors.FailThenPass(tr) {
			fmt.Fprintln(w, "  a command failed, then passed")
		}
		if lines := lastLines(tr.AssistantResponse, digestLines); len(lines) > 0 {
			fmt.Fprintln(w, "  reply ends:")
			for _, l := range lines {
				fmt.Fprintf(w, "    | %s\n", head(l, 160))
			}
		}
		if i+1 < len(turns) {
			fmt.Fprintf(w, "  next prompt: %s\n", head(turns[i+1].UserMessage, 80))
		} else {
			fmt.Fprintln(w, "  next prompt: (none: last turn)")
		}
	}
	return nil
}

// digestTools prints a turn's commands, one line each with ✓/✗ and the
// output's last line, then one line counting the other tools' results
// by tool, in order of first use.
func digestTools(tr *transcript.Turn, w io.Writer) {
	cmds := map[string]string{}
	for _, c := range tr.ToolCalls {
		if c.Command != "" {
			cmds[c.ID] = c.Command
		}
	}
	others := map[string][2]int{}
	var order []string
	for _, r := range tr.ToolResults {
		if c, ok := cmds[r.ID]; ok {
			fmt.Fprintf(w, "  %s $ %s%s\n", mark(r.Success), head(c, 100), lastLine(r.Output))
			continue
		}
		n := r.Name
		if n == "" {
			n = "?"
		}
		if _, seen := others[n]; !seen {
			order = append(order, n)
		}
		v := others[n]
		if r.Success {
			v[0]++
		} else {
			v[1]++
		}
		others[n] = v
	}
	if len(order) == 0 {
		return
	}
	var parts []string
	for _, n := range order {
		s := n
		if v := others[n]; v[1] > 0 {
			s += fmt.Sprintf(" %d✓ %d✗", v[0], v[1])
		} else {
			s += fmt.Sprintf(" %d✓", v[0])
		}
		parts = append(parts, s)
	}
	fmt.Fprintf(w, "  tools: %s\n", strings.Join(parts, ", "))
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// lastLine is " → " and the last non-empty line of a command's output.
func lastLine(out string) string {
	if l := lastLines(out, 1); len(l) > 0 {
		return "  → " + head(l[0], 60)
	}
	return ""
}

// lastLines returns the last n non-empty lines of s.
func lastLines(s string, n int) []string {
	var out []string
	for _, l := range strings.Split(strings.TrimRight(s, "\n "), "\n") {
		if strings.TrimSpace(l) != "" {
			out = append(out, l)
		}
	}
	if len(out) > n {
		out = out[len(out)-n:]
	}
	return out
}
