package anchors

import (
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// FuzzParse: any input either fails to parse with an error or yields a rule
// set that evaluates without panicking.
func FuzzParse(f *testing.F) {
	for _, n := range BuiltinNames() {
		s, _ := Builtin(n)
		f.Add(s.Source)
	}
	f.Add([]byte(minimal))
	f.Add([]byte("name: x\nthreshold: 1\nrules: [{name: a, type: user-checkpoint, weight: 0, confidence: 1, when: {not: {user: {regex: '(', case: sensitive}}}}]\n"))
	ts := turns(
		turn("ok now let's fix it").run("Edit", "a.go", true, "").run("Bash", "go test", true, "tests passed"),
		turn("").prevErr().run("WebSearch", "", false, "Error"),
	)
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := Parse(data, "fuzz.yaml")
		if err != nil {
			return
		}
		e := s.Evaluate(ts)
		e.Flow(0, len(ts))
		e.Flow(1, 1)
	})
}

// FuzzPrefilter: the regex prefilter never rejects a text the regex
// matches, and its match (further literal sets, line by line search) gives
// the regex's own answer on every text, with and without a Unicode
// lower-cased form of the text made first (which other leaves make).
func FuzzPrefilter(f *testing.F) {
	seeds := [][3]string{
		{`\b(go test|pytest|npm (run )?test)\b`, "1", "Running NPM RUN TEST now"},
		{`\b(let'?s|lets)\s+(now\s+)?(work on|move on)\b`, "1", "OK LET'S NOW MOVE ON"},
		{`(works|done)[^\n]{0,80}(now|next)`, "0", "it works, next"},
		{`\b(works|done)\b[^\n]{0,80}\b(now|next)\b`, "1", "x\nDONE\nnow it WORKS; NEXT\n"},
		{`(?m)^(FAIL|FAILED)\b|--- FAIL|\b[1-9][0-9]* (failed|errors?)\b`, "0", "ok\n3 errors\nFAIL\n"},
		{`(?m)^FAIL$`, "0", "x\nFAIL\ny"},
		{`^FAIL`, "0", "x\nFAIL"},
		{`FAIL$`, "0", "FAIL\nx"},
		{`\bdone\b`, "1", "\u0130 DONE\u212a"},
		{`kelvin`, "1", "\u212aelvin"},
		{`\bworks\b[^\n]{0,9}\bnow\b`, "1", "caf\u00e9 WOR\u212aS NOW"},
		{`\bworks\b[^\n]{0,9}\bnow\b`, "1", "caf\u00e9 WORKS NOW"},
		{`ss+`, "1", "\u017fs"},
		{`a|b*`, "0", "zzz"},
		{`x{2,}y`, "0", "xxy"},
		{`ab\s+cd`, "0", "ab\ncd"},
	}
	for _, s := range seeds {
		f.Add(s[0], s[1] == "1", s[2], false)
	}
	f.Fuzz(func(t *testing.T, pattern string, fold bool, s string, lowered bool) {
		pat := pattern
		if fold {
			pat = "(?i)" + pat
		}
		re, err := regexp.Compile(pat)
		if err != nil {
			return
		}
		p := newPrefilter(pattern, fold)
		if p == nil {
			return
		}
		want := re.MatchString(s)
		tx := text{s: s}
		if lowered {
			tx.low()
		}
		if want && !p.mayMatch(&tx) {
			t.Fatalf("prefilter %+v rejects %q, which %q matches", p, s, pat)
		}
		if got := p.match(re, &tx); got != want {
			t.Fatalf("prefilter %+v: match(%q) = %v, %q says %v", p, s, got, pat, want)
		}
	})
}

// FuzzExactSet: the one-pass case-sensitive search agrees with searching
// for each needle.
func FuzzExactSet(f *testing.F) {
	f.Add("npm install x && go build", "npm i ,go build,cargo add,pip install")
	f.Add("NPM INSTALL", "npm install,a,b,c")
	f.Add("\u00e9t\u00e9 caf\u00e9", "caf\u00e9,\u00e9t\u00e9,x,y")
	f.Add("", "a")
	f.Fuzz(func(t *testing.T, s, list string) {
		var needles []string
		for _, n := range strings.Split(list, ",") {
			if n != "" && len(needles) < 64 {
				needles = append(needles, n)
			}
		}
		if len(needles) == 0 {
			return
		}
		want := false
		for _, n := range needles {
			if strings.Contains(s, n) {
				want = true
			}
		}
		set := newExactSet(needles)
		if got := set.in(s); got != want {
			t.Fatalf("in(%q, %q) = %v, want %v", s, needles, got, want)
		}
		if i := set.index(s); i >= 0 && !slices.ContainsFunc(needles, func(n string) bool { return strings.HasPrefix(s[i:], n) }) {
			t.Fatalf("index(%q, %q) = %d, where no needle starts", s, needles, i)
		}
	})
}

// FuzzFoldSet: the one-pass case-insensitive search agrees with searching
// the ASCII-lower-cased text.
func FuzzFoldSet(f *testing.F) {
	f.Add("Build COMPLETED successfully", "completed,built")
	f.Add("testTEST", "st,te")
	f.Add("\u212aelvin Kelvin", "kelvin")
	f.Add("", "a")
	f.Fuzz(func(t *testing.T, s, list string) {
		var needles []string
		for _, n := range strings.Split(strings.ToLower(list), ",") {
			if n != "" && isASCII(n) && len(needles) < 64 {
				needles = append(needles, n)
			}
		}
		if len(needles) == 0 {
			return
		}
		want := false
		low := asciiLower(s)
		for _, n := range needles {
			if strings.Contains(low, n) {
				want = true
			}
		}
		if got := newFoldSet(needles).in(s); got != want {
			t.Fatalf("in(%q, %q) = %v, want %v", s, needles, got, want)
		}
	})
}

func TestDropContaining(t *testing.T) {
	got := dropContaining([]string{"FAILED", "FAIL", "x", "--- FAIL", "x", "cargo test", "go test"})
	if want := []string{"FAIL", "x", "go test"}; !reflect.DeepEqual(got, want) {
		t.Errorf("got %q, want %q", got, want)
	}
}

// FuzzParseLabels: any input either fails with a located error or gives
// labels that keep the format's rules.
func FuzzParseLabels(f *testing.F) {
	f.Add([]byte(`{"transcript":"s","turn":null,"prompt_uuid":"u","type":"task-completion"}`))
	f.Add([]byte(`{"transcript":"s","turn":-1,"type":"none"}` + "\n" + `{"transcript":"s","turn":2,"prompt_head":"x","type":"user-checkpoint"}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		ls, err := ParseLabels(data, "f")
		if err != nil {
			return
		}
		for _, l := range ls {
			switch {
			case l.Turn == Unresolved && l.PromptUUID == "" && l.Timestamp == "":
				t.Errorf("null turn without uuid or timestamp: %+v", l)
			case l.Type == "" && l.Turn != -1, l.Type != "" && l.Turn == -1:
				t.Errorf("none goes with -1: %+v", l)
			}
		}
	})
}

// FuzzSays: the lexicon matcher never panics on any text, and text inside
// a fenced code block never says anything.
func FuzzSays(f *testing.F) {
	f.Add("the fix is done, not broken")
	f.Add("修复完成 未完成 되지 않았습니다 `is_done` done.txt")
	f.Fuzz(func(t *testing.T, s string) {
		fenced := "```\n" + strings.ReplaceAll(s, "`", "'") + "\n```"
		for _, lex := range LexiconNames() {
			Says(lex, strings.ToLower(s))
			if Says(lex, strings.ToLower(fenced)) && !strings.Contains(s, "\n") {
				t.Errorf("%s said inside a code block: %q", lex, fenced)
			}
		}
	})
}

// FuzzProgramKeys: naming a command's programs never panics, and a key is
// never empty and never starts with a space.
func FuzzProgramKeys(f *testing.F) {
	f.Add("sudo /usr/bin/tool --on && echo ok", true)
	f.Add("# comment\ncd /x && FOO=1 npm test | grep ok", false)
	f.Add(`ssh root@10.0.0.1 "opkg list-installed | grep cloud"`, false)
	f.Add("ssh '", true)
	f.Fuzz(func(t *testing.T, cmd string, success bool) {
		for _, k := range programKeys(cmd, success) {
			if k == "" || strings.HasPrefix(k, " ") {
				t.Errorf("programKeys(%q) gave key %q", cmd, k)
			}
		}
	})
}
