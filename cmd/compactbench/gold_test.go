package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestAgreeCommand(t *testing.T) {
	dir := t.TempDir()
	seeds, _ := filepath.Abs("../../corpora/seeds")
	// The second reader names ex1's turn by its prompt uuid only (turn
	// null), misses ex2's turn 1 and adds ex3's turn 1.
	second := `{"transcript": "3f6c1e2a-7b49-4d8e-a1c5-92e0b7d4f6a3", "turn": null, "prompt_uuid": "016e8ca3-7424-5442-9094-30efea0b2a25", "type": "task-completion"}
{"transcript": "` + seeds + `/000-ex2-web-search.jsonl", "turn": 0, "type": "task-completion"}
{"transcript": "` + seeds + `/000-ex3-mixed.jsonl", "turn": 0, "type": "task-completion"}
{"transcript": "` + seeds + `/000-ex3-mixed.jsonl", "turn": 1, "type": "user-checkpoint"}
{"transcript": "` + seeds + `/000-ex3-mixed.jsonl", "turn": 2, "type": "task-completion"}
`
	if err := os.WriteFile(filepath.Join(dir, "second.labels.jsonl"), []byte(second), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := runCLI(t, "agree", "--first", "../../corpora/seeds/labels.jsonl", "--second", filepath.Join(dir, "second.labels.jsonl"), "../../corpora/seeds")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	for _, want := range []string{
		"3 transcripts read twice",
		"anchors: first 5, second 5",
		"│ turn (any type)         │ 0.80      │ 0.80   │ 0.80 │",
		"Cohen's kappa",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
}

func TestTuneCV(t *testing.T) {
	code, out, errOut := runCLI(t, "tune", "--cv", "2", "--rules", "tuned", "../../corpora/seeds")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	for _, want := range []string{
		"gold: 3 transcripts",
		"tuned fitted, cross-validated",
		"every turn is an anchor",
		"any turn with a successful edit",
		"rules enabled when fitted on every transcript:",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	for _, bad := range [][]string{
		{"tune", "--cv", "1", "--rules", "tuned", "../../corpora/seeds"},
		{"tune", "--cv", "2", "../../corpora/seeds"}, // three default sets
		{"tune", "--cv", "2", "--rules", "tuned", "--set", "mask.keep=1,2", "../../corpora/seeds"},
	} {
		if code, _, _ := runCLI(t, bad...); code != 2 {
			t.Errorf("%v: exit %d, want 2", bad, code)
		}
	}
}
