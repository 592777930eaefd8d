package compaction

import (
	"fmt"
	"strings"
)

// handoff writes a checkpoint summary for the strategies whose source asks
// its model for a free-form handoff (Codex's and opencode's prompts): what
// was done, what is in progress, constraints, files, errors, next steps.
func handoff(sp *span, title string) string {
	var b strings.Builder
	b.WriteString(title + "\n\n")
	b.WriteString("Progress:\n")
	var done []string
	for _, t := range sp.doneTodos() {
		done = append(done, "- Done: "+t)
	}
	for _, p := range sp.modified() {
		done = append(done, "- Changed "+p)
	}
	if sp.lastSay != "" {
		done = append(done, "- Last: "+firstSentence(sp.lastSay, 200))
	}
	writeList(&b, done, "- (nothing recorded)")
	if len(sp.constraints) > 0 {
		b.WriteString("\nConstraints and preferences:\n")
		for _, c := range sp.constraints {
			fmt.Fprintf(&b, "- %s\n", c)
		}
	}
	if len(sp.decisions.list) > 0 {
		b.WriteString("\nKey decisions:\n")
		for _, d := range sp.decisions.list {
			fmt.Fprintf(&b, "- %s\n", d)
		}
	}
	if files := append(sp.modified(), sp.readOnly()...); len(files) > 0 {
		b.WriteString("\nFiles:\n")
		for _, f := range files {
			fmt.Fprintf(&b, "- %s\n", f)
		}
	}
	if sp.lastError != "" {
		fmt.Fprintf(&b, "\nUnresolved error:\n- %s\n", sp.lastError)
	}
	b.WriteString("\nNext steps:\n")
	var next []string
	for i, t := range sp.openTodos() {
		next = append(next, fmt.Sprintf("%d. %s", i+1, t.Content))
	}
	if len(next) == 0 && len(sp.prompts) > 0 {
		next = append(next, "1. Continue: "+firstSentence(sp.prompts[len(sp.prompts)-1], 200))
	}
	writeList(&b, next, "1. (none)")
	return b.String()
}
