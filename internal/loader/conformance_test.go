package loader

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/compactbench/compactbench/internal/analysis"
	"github.com/compactbench/compactbench/internal/transcript"
)

// TestConformance reads every input under testdata/conformance and
// compares what the loader makes of it with its expectation. Each case is
// two files: the input (any name, format detected as a user's run would)
// and NAME.want beside it, which lists, one "key=value" a line:
//
//	format=claude-code   the reader detection picks
//	transcripts=1        how many transcripts the file holds
//	messages=12          summed over the file's transcripts
//	turns=3
//	api_calls=4
//	tool_calls=2
//	problems=1
//	compactions=1        recorded compaction events
//	unknown_types=0      Stats.UnknownTypes, UnknownKeys, OffPath
//	unknown_keys=0
//	off_path=branch=2
//	image_tokens=1844    summed over the blocks (images with known size)
//	tool_refs=1          tool_reference entries read
//	problem~=TEXT        some problem's reason contains TEXT (repeatable)
//	prompt~=TEXT         some turn's prompt contains TEXT (repeatable)
//
// The cases are small files written for compactbench in the shapes other
// tools that read these formats test against. Adding a case is adding two
// files; go test -update writes the counts of a new case's .want (review
// them) and keeps its problem~= and prompt~= lines.
func TestConformance(t *testing.T) {
	wants, err := filepath.Glob("testdata/conformance/*.want")
	if err != nil || len(wants) == 0 {
		t.Fatalf("no conformance cases: %v", err)
	}
	for _, want := range wants {
		stem := strings.TrimSuffix(want, ".want")
		inputs, _ := filepath.Glob(stem + ".*")
		var input string
		for _, p := range inputs {
			if p != want {
				input = p
			}
		}
		t.Run(filepath.Base(stem), func(t *testing.T) {
			if input == "" {
				t.Fatalf("no input file beside %s", want)
			}
			var trs []*transcript.Transcript
			if err := ReadFile(input, Options{}, func(tr *transcript.Transcript) error {
				trs = append(trs, tr)
				return nil
			}); err != nil {
				t.Fatalf("ReadFile: %v", err)
			}
			raw, err := os.ReadFile(input)
			if err != nil {
				t.Fatal(err)
			}
			for _, tr := range trs {
				if err := checkAccounting(tr, textLines(raw)); err != nil {
					t.Error(err)
				}
			}
			got := conformanceCounts(trs)
			data, err := os.ReadFile(want)
			if err != nil {
				t.Fatal(err)
			}
			var keep []string
			for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
				k, v, _ := strings.Cut(strings.TrimSpace(line), "=")
				switch k {
				case "problem~":
					keep = append(keep, line)
					if !anyContains(got.problems, v) {
						t.Errorf("no problem contains %q; problems: %q", v, got.problems)
					}
				case "prompt~":
					keep = append(keep, line)
					if !anyContains(got.prompts, v) {
						t.Errorf("no turn prompt contains %q; prompts: %q", v, got.prompts)
					}
				case "":
				default:
					if g, ok := got.counts[k]; !ok {
						t.Errorf("%s: unknown key %q", want, k)
					} else if g != v {
						t.Errorf("%s = %s, want %s", k, g, v)
					}
				}
			}
			if *update {
				keys := make([]string, 0, len(got.counts))
				for k := range got.counts {
					keys = append(keys, k)
				}
				sort.Strings(keys)
				var b strings.Builder
				for _, k := range keys {
					fmt.Fprintf(&b, "%s=%s\n", k, got.counts[k])
				}
				for _, l := range keep {
					b.WriteString(l + "\n")
				}
				if err := os.WriteFile(want, []byte(b.String()), 0o644); err != nil {
					t.Fatal(err)
				}
			}
		})
	}
}

type conformanceGot struct {
	counts   map[string]string
	problems []string
	prompts  []string
}

func conformanceCounts(trs []*transcript.Transcript) conformanceGot {
	g := conformanceGot{counts: map[string]string{}}
	var msgs, turns, calls, tools, problems, compactions, unknownTypes, unknownKeys, imageTokens, toolRefs int
	offPath := map[string]int{}
	format := ""
	for _, tr := range trs {
		format = tr.Format
		compactions += len(tr.Compactions)
		unknownTypes += tr.Stats.UnknownTypes
		unknownKeys += tr.Stats.UnknownKeys
		for k, n := range tr.Stats.OffPath {
			offPath[k] += n
		}
		for _, m := range tr.Messages {
			for _, b := range m.Blocks {
				imageTokens += b.ImageTokens
				toolRefs += len(b.ToolRefs)
			}
		}
		msgs += len(tr.Messages)
		for _, tu := range tr.Turns() {
			turns++
			g.prompts = append(g.prompts, tu.UserMessage)
		}
		calls += tr.Stats.APICalls
		tools += tr.Stats.ToolCalls
		problems += len(tr.Problems)
		for _, p := range tr.Problems {
			g.problems = append(g.problems, p.Reason)
		}
	}
	g.counts["format"] = format
	g.counts["transcripts"] = fmt.Sprint(len(trs))
	g.counts["messages"] = fmt.Sprint(msgs)
	g.counts["turns"] = fmt.Sprint(turns)
	g.counts["api_calls"] = fmt.Sprint(calls)
	g.counts["tool_calls"] = fmt.Sprint(tools)
	g.counts["problems"] = fmt.Sprint(problems)
	g.counts["compactions"] = fmt.Sprint(compactions)
	g.counts["unknown_types"] = fmt.Sprint(unknownTypes)
	g.counts["unknown_keys"] = fmt.Sprint(unknownKeys)
	g.counts["off_path"] = analysis.FormatCounts(offPath)
	g.counts["image_tokens"] = fmt.Sprint(imageTokens)
	g.counts["tool_refs"] = fmt.Sprint(toolRefs)
	return g
}

func anyContains(list []string, frag string) bool {
	for _, s := range list {
		if strings.Contains(s, frag) {
			return true
		}
	}
	return false
}
