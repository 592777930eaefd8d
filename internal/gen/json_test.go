package gen

import (
	"encoding/json"
	"math/rand/v2"
	"regexp"
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

func TestAppendStr(t *testing.T) {
	for _, s := range []string{"", "plain", `quote " and \ slash`, "line\nbreak\ttab\rcr", "\x00\x01\x1f", "→ arrow ✓ and 📋", "</script>&"} {
		b := appendStr(nil, s)
		var back string
		if err := json.Unmarshal(b, &back); err != nil || back != s {
			t.Errorf("appendStr(%q) = %s: decodes to %q, %v", s, b, back, err)
		}
	}
	if got := string(appendStr(nil, "a\"b\n")); got != `"a\"b\n"` {
		t.Errorf("escaping: %s", got)
	}
}

// FuzzAppendStr: any valid UTF-8 text survives a round trip through JSON.
func FuzzAppendStr(f *testing.F) {
	for _, s := range []string{"", "x", "\"\\\n", "\x00→", "{\"a\":[1]}"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if !utf8.ValidString(s) {
			t.Skip("the generator only writes valid UTF-8")
		}
		var back string
		if err := json.Unmarshal(appendStr(nil, s), &back); err != nil || back != s {
			t.Fatalf("%q: round trip gives %q, %v", s, back, err)
		}
	})
}

func TestKeys(t *testing.T) {
	b := append([]byte(nil), '{')
	b = kvStr(b, "a", "x")
	b = kvInt(b, "n", -3)
	b = kvBool(b, "ok", true)
	b = kvNull(b, "z")
	b = append(appendKey(b, "arr"), '[')
	b = append(b, ']', '}')
	if got := string(b); got != `{"a":"x","n":-3,"ok":true,"z":null,"arr":[]}` {
		t.Errorf("got %s", got)
	}
}

func TestAppendTime(t *testing.T) {
	for _, ms := range []int64{0, epoch, epoch + 86_400_000*59 + 3_599_999, 1_767_225_599_999} {
		want := time.UnixMilli(ms).UTC().Format("2006-01-02T15:04:05.000Z")
		if got := string(appendTime(nil, ms)); got != want {
			t.Errorf("appendTime(%d) = %s, want %s", ms, got, want)
		}
	}
}

func TestIDs(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	uuid := regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`)
	for i := 0; i < 100; i++ {
		if u := newUUID(r); !uuid.MatchString(u) {
			t.Fatalf("not a v4 UUID: %s", u)
		}
	}
	if id := apiID(r, "toolu_01", 22); !regexp.MustCompile(`^toolu_01[0-9A-Za-z]{22}$`).MatchString(id) {
		t.Errorf("tool id %s", id)
	}
}

func TestCeilDiv(t *testing.T) {
	for _, c := range []struct {
		n    int
		per  float64
		want int64
	}{{0, 4, 0}, {1, 4, 1}, {4, 4, 1}, {5, 4, 2}, {9, 3, 3}, {10, 3, 4}, {-2, 3, 0}, {20000, 5, 4000}} {
		if got := ceilDiv(c.n, c.per); got != c.want {
			t.Errorf("ceilDiv(%d, %v) = %d, want %d", c.n, c.per, got, c.want)
		}
	}
}

func TestFill(t *testing.T) {
	for _, c := range []struct{ tmpl, want string }{
		{"{a} and {b}", "1 and 2"},
		{"{unknown} stays", "{unknown} stays"},
		{"if x { return {a} }", "if x { return 1 }"},
		{"map{{a}}", "map{1}"},
		{"no close {a", "no close {a"},
	} {
		if got := fill(c.tmpl, "a", "1", "b", "2"); got != c.want {
			t.Errorf("fill(%q) = %q, want %q", c.tmpl, got, c.want)
		}
	}
}

func TestNumbered(t *testing.T) {
	got := numbered("a\n\nb")
	want := "     1→a\n     2→\n     3→b\n"
	if got != want {
		t.Errorf("numbered = %q, want %q", got, want)
	}
	if !strings.HasSuffix(numbered(strings.Repeat("x\n", 1000)), "  1000→x\n") {
		t.Error("line numbers do not align at 1000")
	}
}

func TestPlural(t *testing.T) {
	for in, want := range map[string]string{"entry": "entries", "address": "addresses", "batch": "batches", "token": "tokens"} {
		if got := plural(in); got != want {
			t.Errorf("plural(%s) = %s", in, got)
		}
	}
}

func TestErrorLine(t *testing.T) {
	for out, want := range map[string]string{
		"   Compiling x v0.4.2\nerror[E0425]: cannot find value\nmore": "error[E0425]: cannot find value",
		"ok  \tpkg\t0.1s\n--- FAIL: TestX (0.00s)\nFAIL":               "--- FAIL: TestX (0.00s)",
		"\nplain output\nsecond":                                       "plain output",
	} {
		if got := errorLine(out); got != want {
			t.Errorf("errorLine(%q) = %q, want %q", out, got, want)
		}
	}
}
