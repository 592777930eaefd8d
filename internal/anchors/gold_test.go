package anchors

import (
	"math"
	"slices"
	"testing"

	"github.com/compactbench/compactbench/internal/transcript"
)

func gd(id string, gold ...Type) GoldDoc {
	return GoldDoc{ID: id, Turns: make([]transcript.Turn, len(gold)), Gold: gold, Lang: "en"}
}

func TestAgree(t *testing.T) {
	// 10 turns: both mark 0 and 1 (same type on 0 only); first alone marks
	// 2; second alone marks 3.
	a := gd("s", TaskCompletion, UserCheckpoint, TaskCompletion, "", "", "", "", "", "", "")
	b := gd("s", TaskCompletion, TaskCompletion, "", FeatureMilestone, "", "", "", "", "", "")
	g := Agree([]GoldDoc{a}, []GoldDoc{b})
	if g.Score.Turn != (Score{TP: 2, FP: 1, FN: 1}) {
		t.Errorf("turn score %+v", g.Score.Turn)
	}
	if g.Score.Typed != (Score{TP: 1, FP: 2, FN: 2}) {
		t.Errorf("typed score %+v", g.Score.Typed)
	}
	// po = 8/10, p1 = p2 = 0.3, pe = 0.09 + 0.49 = 0.58, kappa = 0.22/0.42
	if want := 0.22 / 0.42; math.Abs(g.Kappa-want) > 1e-9 {
		t.Errorf("kappa %v, want %v", g.Kappa, want)
	}
}

func TestNewGoldDocPrecedence(t *testing.T) {
	d := NewGoldDoc("s", make([]transcript.Turn, 2), []Label{{Turn: 1, Type: UserCheckpoint}, {Turn: 1, Type: ErrorResolution}, {Turn: 5, Type: TaskCompletion}})
	if d.Gold[0] != "" || d.Gold[1] != ErrorResolution {
		t.Errorf("gold %v", d.Gold)
	}
}

func TestPromptLanguage(t *testing.T) {
	for _, c := range []struct{ text, want string }{
		{"fix the login bug and run the tests", "en"},
		{"修复登录页面的问题，然后运行测试", "zh"},
		{"ログインのバグを直してください", "ja"},
		{"로그인 버그를 고쳐 주세요", "ko"},
		{"Implementa el plan para la base de datos y los tests", "es"},
		{"", "en"},
	} {
		if got := PromptLanguage(turns(turn(c.text))); got != c.want {
			t.Errorf("%q: %s, want %s", c.text, got, c.want)
		}
	}
}

// TestCrossValidateHoldsOut: a rule that only matches in one transcript is
// never enabled when that transcript is held out, so it cannot score there.
func TestCrossValidateHoldsOut(t *testing.T) {
	set, err := Parse([]byte(`
name: cv
threshold: 0.5
rules:
  - {name: magic, type: task-completion, weight: 1, confidence: 1, when: [{user: {contains: magic, case: sensitive}}]}
  - {name: edit, type: task-completion, weight: 1, confidence: 1, when: [{changed: true}]}
`), "cv.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var docs []GoldDoc
	for _, id := range []string{"a", "b", "c", "d", "e", "f"} {
		ts := turns(turn("edit it").run("Edit", "x.go", true, "ok"), turn("chat"))
		docs = append(docs, GoldDoc{ID: id, Turns: ts, Gold: []Type{TaskCompletion, ""}, Lang: "en"})
	}
	// Only "a" has the magic turn, and it is an anchor there.
	docs[0].Turns = turns(turn("edit it").run("Edit", "x.go", true, "ok"), turn("magic"))
	docs[0].Gold = []Type{TaskCompletion, TaskCompletion}
	res := CrossValidate(set, docs, 3, 0.5)
	if !res.All[0] || !res.All[1] {
		t.Errorf("fitted on all: %v, want both rules", res.All)
	}
	// Held out, "a"'s magic turn is missed: the rule was fitted without it.
	if res.Held.Turn != (Score{TP: 6, FN: 1}) {
		t.Errorf("held-out score %+v", res.Held.Turn)
	}
	if res.Fitted.Turn != (Score{TP: 7}) {
		t.Errorf("fitted score %+v", res.Fitted.Turn)
	}
}

// TestCrossValidateByGroup: left one folder out, a rule that only one
// person's sessions support is not enabled when that person is held out,
// even though k-fold by session (which mixes the person's sessions into
// training) finds it.
func TestCrossValidateByGroup(t *testing.T) {
	set, err := Parse([]byte(`
name: cv
threshold: 0.5
rules:
  - {name: habit, type: user-checkpoint, weight: 1, confidence: 1, when: [{user: {contains: roger, case: sensitive}}]}
  - {name: edit, type: task-completion, weight: 1, confidence: 1, when: [{changed: true}]}
`), "cv.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var docs []GoldDoc
	for i, id := range []string{"a1", "a2", "a3", "a4", "b1", "b2", "c1", "c2"} {
		ts := turns(turn("edit it").run("Edit", "x.go", true, "ok"), turn("chat"))
		d := GoldDoc{ID: id, Turns: ts, Gold: []Type{TaskCompletion, ""}, Lang: "en", Group: id[:1]}
		if i < 4 { // person a says "roger" when approving
			d.Turns = turns(turn("edit it").run("Edit", "x.go", true, "ok"), turn("roger"))
			d.Gold = []Type{TaskCompletion, UserCheckpoint}
		}
		docs = append(docs, d)
	}
	res := CrossValidateByGroup(set, docs, 0.5)
	if res.K != 3 || !slices.Equal(res.Groups, []string{"a", "b", "c"}) {
		t.Fatalf("folds %d %v, want the 3 folders", res.K, res.Groups)
	}
	if res.Held.ByType[2] != (Score{FN: 4}) { // user-checkpoint
		t.Errorf("left out, person a's habit is still found: %+v", res.Held.ByType[2])
	}
	if kf := CrossValidate(set, docs, 4, 0.5); kf.Held.ByType[2].TP == 0 {
		t.Errorf("k-fold by session should find the habit: %+v", kf.Held.ByType[2])
	}
}

func TestGroupOf(t *testing.T) {
	for _, c := range []struct {
		roots []string
		file  string
		want  string
	}{
		{[]string{"/c/real"}, "/c/real/alice/proj/s1.jsonl", "alice"},
		{[]string{"/c/other", "/c/real/"}, "/c/real/bob/s.jsonl", "bob"},
		{[]string{"/c/real/alice"}, "/c/real/alice/s.jsonl", "alice"},
		{[]string{"/c/real/alice/s.jsonl"}, "/c/real/alice/s.jsonl", "alice"},
		{[]string{"/elsewhere"}, "/c/real/alice/s.jsonl", "alice"},
	} {
		if got := GroupOf(c.roots, c.file); got != c.want {
			t.Errorf("GroupOf(%v, %s) = %q, want %q", c.roots, c.file, got, c.want)
		}
	}
}
