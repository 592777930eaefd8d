package anchors

import (
	"slices"
	"strings"
	"testing"

	"github.com/compactbench/compactbench/internal/transcript"
)

func TestSays(t *testing.T) {
	for _, c := range []struct {
		lex, text string
		want      bool
	}{
		{"done", "All tests pass. The fix is done.", true},
		{"done", "修复完成，测试全部通过。", true},
		{"done", "已修复登录页面的问题", true},
		{"done", "修正しました。ビルドも通ります。", true},
		{"done", "버그를 수정했습니다.", true},
		{"done", "Listo, el cambio está aplicado.", true},
		{"done", "✅ Build passes", true},
		// not in prose: code, identifiers, paths
		{"done", "I renamed `is_done` in the handler.", false},
		{"done", "Updated src/fixed/handler.go and is_done_flag.", false},
		{"done", "```\nstatus: done\n```\nI looked at the output.", false},
		{"done", "calls markDone() and done() now", false},
		{"done", "see done.txt for details", false},
		// negation
		{"done", "The migration is NOT complete yet.", false},
		{"done", "This is not done.", false},
		{"done", "The build isn't fixed", false},
		{"done", "还未完成", false},
		{"done", "没有修复", false},
		{"done", "수정되지 않았습니다. 완료되지 않았습니다", false},
		{"approval", "sweet, worked like a charm", true},
		{"approval", "Good job!", true},
		{"approval", "不错，继续", true},
		{"approval", "not great", false},
		{"go-ahead", "可以push", true},
		{"go-ahead", "全部执行", true},
		{"go-ahead", "yes do it", true},
		{"go-ahead", "Yes, go ahead and implement it", true},
		{"go-ahead", "what does this function do?", false},
		{"direction", "Now let's work on the settings page", true},
		{"direction", "接下来做导出功能", true},
		{"success", "okay vm opened", true},
		{"success", "成功了！", true},
		{"failure", "still broken after the change", true},
		{"failure", "还是不行，报错了", true},
		{"failure", "no errors this time", false},
		{"handoff", "Done. Refresh the page and let me know if the filter is gone.", true},
		{"handoff", "브라우저를 새로고침 해보시고 문제 있으면 알려주세요", true},
		{"handoff", "All 77 tests pass.", false},
		// Chinese one-character words stand alone; questions ask
		{"go-ahead", "好，开始吧", true},
		{"go-ahead", "行吧", true},
		{"go-ahead", "好像没有考虑登录后的菜单栏", false},
		{"go-ahead", "先执行测试", true},
		{"go-ahead", "进行中", false},
		{"go-ahead", "这些文件是我生成的吗?是否可以删除？", false},
		{"go-ahead", "ok can you add a test?", false},
		{"go-ahead", "ok. can you add a test?", true},
		{"approval", "looks good? not sure", false},
		// Korean: words stand apart and take endings; a request is no go-ahead
		{"done", "설정을 변경했습니다. 이제 필터가 보이지 않습니다.", true},
		{"done", "아직 미완료 상태입니다", false},
		{"done", "변경이 적용되지 않았습니다", false},
		{"approval", "잘했어! 이제 다음 거 하자", true},
		{"go-ahead", "네, 그렇게 진행해주세요", true},
		{"go-ahead", "ㅇㅋ 고고", true},
		{"go-ahead", "현재 파일 구조 파악 좀 해줘봐", false},
		{"go-ahead", "네트워크 설정을 확인해줘", false},
		{"go-ahead", "응답 형식이 이상해", false},
		{"success", "이제 잘 돼", true},
		{"success", "여전히 잘 되지 않아", false},
		{"failure", "클로드야 안 없어진거 같은데? 다시 확인해볼래?", true},
		{"failure", "새로고침을 해도 제거가 안되는데", true},
		{"failure", "오작동은 없어요. 잘 됩니다", false},
	} {
		if got := Says(c.lex, strings.ToLower(c.text)); got != c.want {
			t.Errorf("Says(%s, %q) = %v, want %v", c.lex, c.text, got, c.want)
		}
	}
}

func TestGitMilestones(t *testing.T) {
	for _, c := range []struct {
		out  string
		ok   bool
		want []string
	}{
		{"[main 1a2b3c4] Fix login redirect\n 2 files changed, 10 insertions(+)", true, []string{GitCommit}},
		{"[feature/auth (root-commit) 9f8e7d6] Initial commit", true, []string{GitCommit}},
		{"To github.com:me/app.git\n   1a2b3c4..5d6e7f8  main -> main\n", true, []string{GitPush}},
		{"To github.com:me/app.git\n * [new branch]      fix-x -> fix-x\n", true, []string{GitPush}},
		{"https://github.com/me/app/pull/42\n", true, []string{GitPR}},
		{"Updating 1a2b3c4..5d6e7f8\nFast-forward\n a.go | 2 +-", true, []string{GitMerge}},
		{"[main 1a2b3c4] Fix login redirect", false, nil}, // a failed result shows nothing
		{"see [main 1a2b3c4] in the log", true, nil},      // not at a line start
		{"nothing to commit, working tree clean", true, nil},
	} {
		tr := turn("commit").run("Bash", "git commit -m x", c.ok, c.out).t
		if got := GitMilestones(&tr); !slices.Equal(got, c.want) {
			t.Errorf("%q: %v, want %v", c.out, got, c.want)
		}
	}
}

func TestChangedFiles(t *testing.T) {
	for _, c := range []struct {
		name string
		b    *tb
		want []string
	}{
		{"edit", turn("x").run("Edit", "/src/app.go", true, "ok"), []string{"/src/app.go"}},
		{"failed edit", turn("x").run("Edit", "/src/app.go", false, "old_string not found"), nil},
		{"scratch write", turn("x").run("Write", "/tmp/probe.py", true, "ok"), nil},
		{"read only", turn("x").run("Read", "/src/app.go", true, "package main").run("Bash", "ls -la", true, "x"), nil},
		{"redirect", turn("x").run("Bash", "echo 'x=1' > config.ini", true, ""), []string{"config.ini (by command)"}},
		{"heredoc", turn("x").run("Bash", "cat > notes.md <<'EOF'\nline > ignored.txt\nEOF", true, ""), []string{"notes.md (by command)"}},
		{"sed -i", turn("x").run("Bash", "sed -i 's/a/b/' src/main.c", true, ""), []string{"src/main.c (by command)"}},
		{"dev null", turn("x").run("Bash", "make 2>&1 > /dev/null", true, ""), nil},
		{"system", turn("x").run("Bash", "sudo opkg remove kmod-usb-net && /etc/init.d/network restart", true, ""), []string{"$ opkg remove", "$ /etc/init.d/network restart"}},
		{"scratch rm", turn("x").run("Bash", "rm /tmp/probe.txt", true, ""), nil},
		{"tee", turn("x").run("Bash", "echo hi | tee -a log.txt", true, "hi"), []string{"log.txt (by command)"}},
	} {
		tr := c.b.t
		if got := ChangedFiles(&tr); !slices.Equal(got, c.want) {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
	patch := turn("x")
	patch.t.ToolCalls = append(patch.t.ToolCalls, toolCall("p1", "apply_patch", "*** Begin Patch\n*** Update File: src/lib.rs\n@@\n-a\n+b\n*** End Patch"))
	patch.result(true, "Success. Updated the following files:\nM src/lib.rs")
	if got := EditedFiles(&patch.t); !slices.Equal(got, []string{"src/lib.rs"}) {
		t.Errorf("apply_patch: %v", got)
	}
}

func TestFailThenPass(t *testing.T) {
	yes := turn("fix").run("Bash", "cd web && npm test", false, "1 failed").run("Edit", "a.js", true, "ok").run("Bash", "npm test -- --watch=false", true, "all passed").t
	no := turn("fix").run("Bash", "npm test", false, "1 failed").run("Bash", "npm run lint", true, "ok").t
	passFirst := turn("fix").run("Bash", "go test ./...", true, "ok").run("Bash", "go test ./x", false, "FAIL").t
	if !FailThenPass(&yes) || FailThenPass(&no) || FailThenPass(&passFirst) {
		t.Errorf("FailThenPass: %v %v %v", FailThenPass(&yes), FailThenPass(&no), FailThenPass(&passFirst))
	}
}

// TestNextUserIsBlindAtWindowEnd: a rule that keeps a turn because the next
// prompt approves it fires on the whole recording, but not when the window
// ends at that turn (a compaction there cannot know the next prompt).
func TestNextUserIsBlindAtWindowEnd(t *testing.T) {
	set, err := Parse([]byte(`
name: next
threshold: 0.5
rules:
  - name: approved
    type: task-completion
    weight: 0.8
    confidence: 0.8
    when:
      - changed: true
      - next_user: {says: approval}
  - name: not-demoted
    type: user-checkpoint
    weight: 0.5
    confidence: 0.8
    when:
      - user: {says: go-ahead}
      - not: {next_user: {says: failure}}
`), "next.yaml")
	if err != nil {
		t.Fatal(err)
	}
	ts := turns(
		turn("add the button").run("Edit", "src/app.tsx", true, "ok"),
		turn("looks good! go ahead and commit"),
		turn("still broken on mobile"),
	)
	ev := set.Evaluate(ts)
	whole := ev.Anchors(0, 3)
	if len(whole) != 1 || whole[0].Turn != 0 || whole[0].Rule != "approved" {
		t.Fatalf("whole recording: %+v", whole)
	}
	if a := ev.Anchors(0, 1); len(a) != 0 {
		t.Errorf("window ending at turn 0 saw the next prompt: %+v", a)
	}
	// Turn 1's go-ahead is demoted by turn 2's report of a failure, but
	// at a window ending at turn 1 that report is in the future.
	if a := ev.Anchors(0, 2); len(a) != 2 || a[1].Rule != "not-demoted" {
		t.Errorf("window [0,2): %+v", a)
	}
	ex := set.Explain(ts, 0)
	if !ex[0].Fired || !strings.Contains(ex[0].Conds[1].Detail, "looks good") {
		t.Errorf("explain: %+v", ex[0])
	}
}

func TestParseNewConditions(t *testing.T) {
	for _, bad := range []string{
		"git: [tag]",
		"user: {says: praise}",
		"changed: maybe",
	} {
		src := "name: x\nthreshold: 0.5\nrules:\n  - {name: r, type: task-completion, weight: 1, confidence: 1, when: [{" + bad + "}]}\n"
		if _, err := Parse([]byte(src), "x.yaml"); err == nil {
			t.Errorf("%s: no error", bad)
		}
	}
}

func toolCall(id, name, input string) transcript.ToolCall {
	return transcript.ToolCall{ID: id, Name: name, Input: input}
}

// TestExplainNewConditions: inspect --explain shows each new condition's
// verdict and what it found.
func TestExplainNewConditions(t *testing.T) {
	set, err := Parse([]byte(`
name: x
threshold: 0.5
rules:
  - name: all-new
    type: feature-milestone
    weight: 1
    confidence: 1
    when:
      - changed: true
      - checked: true
      - git: [commit]
      - fail_then_pass: true
      - response: {says: done}
`), "x.yaml")
	if err != nil {
		t.Fatal(err)
	}
	ts := turns(turn("fix and commit").
		run("Bash", "go test ./...", false, "--- FAIL: TestX").
		run("Edit", "/src/x.go", true, "ok").
		run("Bash", "go test ./...", true, "ok  	example.com/x").
		run("Bash", "git commit -am fix", true, "[main 1a2b3c4] fix\n 1 file changed").
		say("已修复，测试通过。"))
	ex := set.Explain(ts, 0)[0]
	if !ex.Fired {
		t.Fatalf("did not fire: %+v", ex)
	}
	want := []string{
		"changed: true|1 files changed: /src/x.go",
		"checked: true|ran after the first change: true",
		"git: any of [commit]|shown: commit",
		"fail_then_pass: true|failed and then passed: true",
		"response says done (prose, unnegated, case-insensitive)|response",
	}
	for i, w := range want {
		text, detail, _ := strings.Cut(w, "|")
		if c := ex.Conds[i]; c.Text != text || !strings.Contains(c.Detail, detail) || !c.Held {
			t.Errorf("condition %d: %q / %q, want %q / …%q…", i, c.Text, c.Detail, text, detail)
		}
	}
}
