package loader

import (
	"strconv"
	"strings"
	"testing"

	"github.com/valyala/fastjson"
)

// renderBoth renders doc with renderJSON and with marshal, each after
// lastWinsLazy on its own parse; ok is false when doc does not parse.
// When decodeFirst is set, every string is decoded before renderJSON runs
// (a value read before it is rendered).
func renderBoth(doc string, decodeFirst bool) (got, want string, ok bool) {
	var p1, p2 fastjson.Parser
	v1, err1 := p1.Parse(doc)
	v2, err2 := p2.Parse(doc)
	if err1 != nil || err2 != nil {
		return "", "", false
	}
	lastWinsLazy(v1)
	lastWinsLazy(v2)
	if decodeFirst {
		decodeAll(v1)
	}
	return string(renderJSON(nil, v1)), string(marshal(nil, v2)), true
}

func TestRenderJSON(t *testing.T) {
	long := strings.Repeat("abcdefgh", 3)
	docs := []string{
		`{"command":"ls -la","file_path":"/a/b.go"}`,
		`{"content":"package x\n\nfunc f() {\n\treturn \"q\" \\ done\r\n}\b\f"}`,
		`{"a":"` + long + `\n` + long + `"}`,
		`{"slash":"a\/b","u":"\u0041\u00e9","lone":"\ud800","ctl":"\u0001\u007f"}`,
		"{\"del\":\"a\x7fb\",\"del esc\":\"a\x7fb\\n\",\"raw tab\":\"a\tb\",\"raw nl\":\"" + long + "\n\"}",
		`{"utf8":"é 日本 😀","utf8 esc":"é\n","bad":"\x"}`,
		"{\"bad byte\":\"a\xffb\",\"bad byte esc\":\"a\xff\\n\"}",
		`{"k":1,"k":"two","n":{"x":"a","x":"\t"},"arr":[1,"s\"",{"d":null},[true,false]],"num":-1.5e3}`,
		`{"esc\"key":"v","\u0041":"w"}`, `"top \"string\""`, `12`, `null`, `[]`, `{}`,
	}
	for _, s := range quoteCases {
		docs = append(docs, string(strconv.AppendQuote(nil, s)), `{"k":`+string(strconv.AppendQuote(nil, s))+`}`)
	}
	for _, doc := range docs {
		for _, decodeFirst := range []bool{false, true} {
			got, want, ok := renderBoth(doc, decodeFirst)
			if !ok {
				t.Fatalf("%q does not parse", doc)
			}
			if got != want {
				t.Errorf("%q (decoded first: %v): renderJSON = %s, marshal = %s", doc, decodeFirst, got, want)
			}
		}
	}
}

func TestRequotesAsWritten(t *testing.T) {
	tests := []struct {
		raw  string
		want bool
	}{
		{"", true},
		{"plain text", true},
		{"é 日本", true},
		{"a\x7fb", true}, // no escape: decoded, it is kept as it is
		{`a\nb\tc\"d\\e\bf\fg\rh`, true},
		{`a\/b`, false},
		{`\u0041`, false},
		{"é\\n", true},
		{"日本\\n😀", true},
		{"\u2028\\n", false},
		{"\u00ad\\n", false},
		{"\xff\\n", false},
		{"\xe6\x97\\n", false},
		{"\ufffd\\n", true},
		{"a\x7f\\n", false},
		{"a\tb", false},
		{strings.Repeat("x", 20) + "\x01", false},
		{strings.Repeat("x", 20) + "\x01\\n", false},
		{strings.Repeat("x", 7) + "\x80" + `\n`, false},
		{strings.Repeat("x", 7) + "é" + strings.Repeat("x", 9) + `\n`, true},
		{strings.Repeat("x", 9) + "\x7f" + strings.Repeat("x", 9) + `\n`, false},
	}
	for _, tt := range tests {
		if got := requotesAsWritten([]byte(tt.raw)); got != tt.want {
			t.Errorf("requotesAsWritten(%q) = %v, want %v", tt.raw, got, tt.want)
		}
	}
}

// FuzzRenderJSON checks renderJSON against marshal, the rendering it
// replaces, on any input, with its strings undecoded or decoded first.
func FuzzRenderJSON(f *testing.F) {
	for _, s := range quoteCases {
		f.Add(`{"k":`+string(strconv.AppendQuote(nil, s))+`}`, false)
	}
	f.Add(`{"a":[1,{"b":"\u00e9","b":"\n"}],"c":"\ud800","d":"x\/y\n"}`, true)
	f.Fuzz(func(t *testing.T, doc string, decodeFirst bool) {
		got, want, ok := renderBoth(doc, decodeFirst)
		if !ok {
			t.Skip("not JSON")
		}
		if got != want {
			t.Errorf("%q: renderJSON = %s, marshal = %s", doc, got, want)
		}
	})
}
