package loader

import (
	"math/rand/v2"
	"strconv"
	"testing"

	"github.com/valyala/fastjson"
)

// quoteCases are strings that take each path of quoteJSON.
var quoteCases = []string{
	"", "plain", "with space ~", `a "quoted" word`, `back\slash`, "tab\there", "line\nbreak\r\n",
	"\a\b\f\v", "\x00\x01\x1f", "del\x7f", "é ü ß 日本", "\u2028 \u00ad \ufeff", "\U0001F600 emoji",
	"\U000E0001 tag", "bad \xff byte", "cut \xe6\x97", "\ufffd real", "mix \"\x7f\u2028\xff\t\U000E0001",
}

// TestQuoteJSON checks quoteJSON against fastjson's own quoting
// (strconv.AppendQuote when the string has a character to escape).
func TestQuoteJSON(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	cases := append([]string{}, quoteCases...)
	for range 2000 {
		b := make([]byte, r.IntN(24))
		for i := range b {
			b[i] = byte(r.IntN(256))
		}
		cases = append(cases, string(b))
	}
	for _, s := range cases {
		var v fastjson.Arena
		want := string(v.NewString(s).MarshalTo(nil))
		if got := string(quoteJSON(nil, []byte(s))); got != want {
			t.Errorf("quoteJSON(%q) = %s, want %s", s, got, want)
		}
	}
}

// TestMarshal checks that marshal, after lastWinsLazy, renders a record as
// MarshalTo does after lastWins.
func TestMarshal(t *testing.T) {
	docs := []string{
		`{"a":1,"b":"x\ny","c":[true,false,null,1.5e3,"\u00e9\u2028"],"d":{"e":"\\\"q\""}}`,
		`{"k":1,"k":2,"n":{"x":"a","x":"\t"}}`,
		`{"esc\"key":"v","\u0041":"\ud83d\ude00","lone":"\ud800","ctl":"\u0001\u007f"}`,
		`["a",{"b":[{"c":"\/"}]},[],{}]`, `"just \"a\" string"`, `-0.0`, `{"a":"\x"}`,
	}
	for _, s := range quoteCases {
		docs = append(docs, string(strconv.AppendQuote(nil, s)))
	}
	for _, d := range docs {
		got, want, ok := marshalBoth(d)
		if !ok {
			t.Fatalf("%q does not parse", d)
		}
		if got != want {
			t.Errorf("%s: marshal = %s, want %s", d, got, want)
		}
	}
}

// marshalBoth renders doc with marshal after lastWinsLazy and with
// MarshalTo after lastWins; ok is false when doc does not parse (the
// caller fails or skips: two empty renderings would compare equal).
func marshalBoth(doc string) (got, want string, ok bool) {
	var p1, p2 fastjson.Parser
	v1, err1 := p1.Parse(doc)
	v2, err2 := p2.Parse(doc)
	if err1 != nil || err2 != nil {
		return "", "", false
	}
	lastWinsLazy(v1)
	lastWins(v2)
	return string(marshal(nil, v1)), string(v2.MarshalTo(nil)), true
}

// FuzzMarshal checks marshal against lastWins and MarshalTo on any input.
func FuzzMarshal(f *testing.F) {
	for _, s := range quoteCases {
		f.Add(string(strconv.AppendQuote(nil, s)))
	}
	f.Add(`{"a":[1,{"b":"\u00e9","b":"\n"}],"c":"\ud800"}`)
	f.Fuzz(func(t *testing.T, doc string) {
		got, want, ok := marshalBoth(doc)
		if !ok {
			t.Skip("not JSON")
		}
		if got != want {
			t.Errorf("%q: marshal = %s, want %s", doc, got, want)
		}
	})
}
