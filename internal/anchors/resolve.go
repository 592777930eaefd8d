package anchors

import (
	"fmt"
	"strings"
	"unicode"

	"github.com/compactbench/compactbench/internal/transcript"
)

// ResolveLabels places each label on a turn of turns and returns the labels
// with Turn set, and the ones it could not place. A label's turn is found,
// in this order:
//
//  1. by prompt_uuid: the turn whose prompt has that recorded id;
//  2. by timestamp: the turn whose prompt has that recorded timestamp (a
//     Codex rollout has no message ids; its labels name the prompt by time);
//  3. by index, when the label has one and no prompt_head, or its
//     prompt_head agrees with the indexed turn's prompt;
//  4. by prompt_head alone, when exactly one turn's prompt agrees with it.
//
// A label naming its prompt by uuid or timestamp that matches no turn, an
// index out of range, or an index whose prompt disagrees with the label's
// prompt_head (and no other single turn agrees) is a problem: scoring it on
// the indexed turn would score it against another turn.
func ResolveLabels(labels []Label, turns []transcript.Turn) (ok []Label, problems []LabelProblem) {
	var byUUID, byTime map[string]int
	index := func() {
		if byUUID != nil {
			return
		}
		byUUID, byTime = map[string]int{}, map[string]int{}
		for i := range turns {
			if u := turns[i].PromptUUID; u != "" {
				byUUID[u] = i
			}
			if ts := turns[i].PromptTime; ts != "" {
				if _, dup := byTime[ts]; dup {
					byTime[ts] = -1 // ambiguous
				} else {
					byTime[ts] = i
				}
			}
		}
	}
	for _, l := range labels {
		if l.Type == "" {
			continue
		}
		if l.PromptUUID == "" && l.Timestamp == "" && l.PromptHead == "" {
			if l.Turn >= len(turns) {
				problems = append(problems, LabelProblem{l.File, l.Line, fmt.Sprintf("turn %d but the transcript has %d turns", l.Turn, len(turns))})
				continue
			}
			ok = append(ok, l)
			continue
		}
		index()
		if i, found := byUUID[l.PromptUUID]; found && l.PromptUUID != "" {
			l.Turn = i
			ok = append(ok, l)
			continue
		}
		if i, found := byTime[l.Timestamp]; found && i >= 0 && l.Timestamp != "" {
			l.Turn = i
			ok = append(ok, l)
			continue
		}
		if l.Turn >= 0 && l.Turn < len(turns) && (l.PromptHead == "" || HeadAgrees(l.PromptHead, turns[l.Turn].UserMessage)) {
			if l.PromptHead == "" && (l.PromptUUID != "" || l.Timestamp != "") {
				problems = append(problems, LabelProblem{l.File, l.Line, fmt.Sprintf("prompt %s matches no turn, and the label has no prompt_head to check turn %d with", labelKey(l), l.Turn)})
				continue
			}
			ok = append(ok, l)
			continue
		}
		if l.PromptHead != "" {
			hit := -1
			for i := range turns {
				if HeadAgrees(l.PromptHead, turns[i].UserMessage) {
					if hit >= 0 {
						hit = -2
						break
					}
					hit = i
				}
			}
			if hit >= 0 {
				l.Turn = hit
				ok = append(ok, l)
				continue
			}
		}
		why := "matches no turn"
		switch {
		case l.Turn >= len(turns):
			why = fmt.Sprintf("turn %d but the transcript has %d turns", l.Turn, len(turns))
		case l.Turn >= 0:
			why = fmt.Sprintf("turn %d's prompt %q does not agree with the label's prompt_head %q", l.Turn,
				transcript.FirstRunes(normHead(turns[l.Turn].UserMessage), 40), transcript.FirstRunes(normHead(l.PromptHead), 40))
		}
		problems = append(problems, LabelProblem{l.File, l.Line, fmt.Sprintf("prompt %s %s", labelKey(l), why)})
	}
	return ok, problems
}

func labelKey(l Label) string {
	var parts []string
	if l.PromptUUID != "" {
		parts = append(parts, "uuid "+l.PromptUUID)
	}
	if l.Timestamp != "" {
		parts = append(parts, "at "+l.Timestamp)
	}
	if len(parts) == 0 {
		return fmt.Sprintf("%q", transcript.FirstRunes(normHead(l.PromptHead), 40))
	}
	return strings.Join(parts, ", ")
}

// headRunes is how many leading characters of a prompt HeadAgrees compares.
const headRunes = 40

// HeadAgrees reports whether a label's prompt head and a turn's prompt text
// name the same prompt: after collapsing white space and dropping markup
// (`<command-args>` wrappers and the like), the shorter of the two leading
// parts (at most 40 characters) is a prefix of the other.
func HeadAgrees(head, prompt string) bool {
	h, p := []rune(normHead(head)), []rune(normHead(prompt))
	n := min(len(h), len(p), headRunes)
	if n == 0 {
		return len(h) == len(p)
	}
	return string(h[:n]) == string(p[:n])
}

// normHead collapses white space, drops XML-like tags and trailing
// ellipses, so a head written by a reader compares with the loader's text.
func normHead(s string) string {
	var b strings.Builder
	inTag := false
	space := false
	for _, r := range s {
		switch {
		case r == '<':
			inTag = true
			continue
		case r == '>' && inTag:
			inTag = false
			space = true
			continue
		case inTag:
			continue
		case unicode.IsSpace(r):
			space = true
			continue
		}
		if space && b.Len() > 0 {
			b.WriteByte(' ')
		}
		space = false
		b.WriteRune(r)
	}
	return strings.TrimRight(b.String(), "…")
}
