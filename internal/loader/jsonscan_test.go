package loader

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"testing/iotest"
	"unicode/utf8"
)

type scanned struct {
	Values   []string
	Lines    []string // "line-endline@offset"
	Array    bool
	Problems []string
}

func scanAll(t testing.TB, input string, oneByte bool) scanned {
	t.Helper()
	var r = strings.NewReader(input)
	var got scanned
	var err error
	fn := func(v *jsonValue) error {
		got.Values = append(got.Values, string(v.Data))
		got.Lines = append(got.Lines, fmt.Sprintf("%d-%d@%d", v.Line, v.EndLine, v.Offset))
		if v.Index != len(got.Values)-1 {
			t.Fatalf("index %d for value %d", v.Index, len(got.Values)-1)
		}
		return nil
	}
	var probs []scanProblem
	if oneByte {
		got.Array, probs, err = scanValues(iotest.OneByteReader(r), fn)
	} else {
		got.Array, probs, err = scanValues(r, fn)
	}
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range probs {
		got.Problems = append(got.Problems, fmt.Sprintf("%d@%d %s", p.Line, p.Offset, p.Reason))
	}
	return got
}

func TestScanValues(t *testing.T) {
	tests := []struct {
		name  string
		input string
		want  scanned
	}{
		{"array", `[{"a":1},{"b":[2,3]}]`, scanned{
			Values: []string{`{"a":1}`, `{"b":[2,3]}`}, Lines: []string{"1-1@1", "1-1@9"}, Array: true}},
		{"pretty array", "[\n  {\n    \"a\": 1\n  },\n  {\"b\": 2}\n]\n", scanned{
			Values: []string{"{\n    \"a\": 1\n  }", `{"b": 2}`}, Lines: []string{"2-4@4", "5-5@24"}, Array: true}},
		{"strings with brackets and escapes", `[{"t":"a]}\"{[b\\"},"x\"y"]`, scanned{
			Values: []string{`{"t":"a]}\"{[b\\"}`, `"x\"y"`}, Lines: []string{"1-1@1", "1-1@20"}, Array: true}},
		{"json lines", "{\"a\":1}\n{\"b\":2}\n\n{\"c\":3}", scanned{
			Values: []string{`{"a":1}`, `{"b":2}`, `{"c":3}`}, Lines: []string{"1-1@0", "2-2@8", "4-4@17"}}},
		{"single object", "\xef\xbb\xbf  {\"a\": [1, {\"b\": \"}\"}]}\n", scanned{
			Values: []string{`{"a": [1, {"b": "}"}]}`}, Lines: []string{"1-1@5"}}},
		{"scalars", `[1, true ,"s", null]`, scanned{
			Values: []string{"1", "true", `"s"`, "null"}, Lines: []string{"1-1@1", "1-1@4", "1-1@10", "1-1@15"}, Array: true}},
		{"empty array", " [ ] ", scanned{Array: true}},
		{"empty", "", scanned{}},
		{"truncated element", "[{\"a\":1},\n{\"b\":\"cut", scanned{
			Values: []string{`{"a":1}`}, Lines: []string{"1-1@1"}, Array: true,
			Problems: []string{"2@10 truncated: the value starting at line 2 (byte 10) is incomplete"}}},
		{"unclosed array", `[{"a":1}`, scanned{
			Values: []string{`{"a":1}`}, Lines: []string{"1-1@1"}, Array: true,
			Problems: []string{"1@8 truncated: the top-level array is not closed"}}},
		{"data after array", "[{}]\n{\"x\":1}", scanned{
			Values: []string{`{}`}, Lines: []string{"1-1@1"}, Array: true,
			Problems: []string{"2@5 unexpected data after the top-level array; the rest of the file is ignored"}}},
		{"stray closer", "{}}\n{}", scanned{
			Values: []string{`{}`, `{}`}, Lines: []string{"1-1@0", "2-2@4"},
			Problems: []string{"1@2 unexpected '}' between values, skipped"}}},
		{"newline inside string counts", "[\"a\nb\",\n{}]", scanned{
			Values: []string{"\"a\nb\"", "{}"}, Lines: []string{"1-2@1", "3-3@8"}, Array: true}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, oneByte := range []bool{false, true} {
				got := scanAll(t, tt.input, oneByte)
				if !reflect.DeepEqual(got, tt.want) {
					t.Errorf("oneByte=%v\n got %+v\nwant %+v", oneByte, got, tt.want)
				}
			}
		})
	}
}

// TestScanValuesMatchesDecoder checks the split against encoding/json on
// documents whose strings straddle the read chunk size.
func TestScanValuesMatchesDecoder(t *testing.T) {
	var elems []any
	for i := 0; i < 40; i++ {
		elems = append(elems, map[string]any{
			"i":    i,
			"text": strings.Repeat(`x"\]}`, i*9000), // crosses 256 KiB chunks
			"nest": []any{map[string]any{"q": "[{"}, []any{}, nil, 1.5},
		})
	}
	doc, err := json.Marshal(elems)
	if err != nil {
		t.Fatal(err)
	}
	got := scanAll(t, string(doc), false)
	if len(got.Values) != len(elems) || len(got.Problems) != 0 || !got.Array {
		t.Fatalf("got %d values, problems %v", len(got.Values), got.Problems)
	}
	for i, v := range got.Values {
		want, _ := json.Marshal(elems[i])
		if v != string(want) {
			t.Fatalf("value %d differs", i)
		}
	}
}

// TestScanValuesChunkBoundary puts escapes across the boundary between the
// pieces a large value is gathered in.
func TestScanValuesChunkBoundary(t *testing.T) {
	// The value starts with its quote, so the first backslash is the last
	// byte of the first piece.
	pad := strings.Repeat("a", elemChunk-2)
	escapedQuote := `["` + pad + `\\\"b",1]` // \\ then \" : the quote is escaped
	evenSlashes := `["` + pad + `\\","c"]`   // \\ : the quote closes the string
	for _, oneByte := range []bool{false, true} {
		got := scanAll(t, escapedQuote, oneByte)
		if len(got.Values) != 2 || got.Values[0] != `"`+pad+`\\\"b"` || got.Values[1] != "1" || len(got.Problems) != 0 {
			t.Errorf("escaped quote across pieces: %d values, problems %v", len(got.Values), got.Problems)
		}
		got = scanAll(t, evenSlashes, oneByte)
		if len(got.Values) != 2 || got.Values[1] != `"c"` || len(got.Problems) != 0 {
			t.Errorf("even backslashes across pieces: %d values, problems %v", len(got.Values), got.Problems)
		}
	}
}

func TestShapeOf(t *testing.T) {
	tests := []struct {
		head     string
		array    bool
		complete bool
		has      []string
		hasNot   []string
	}{
		{`[{"uuid":"x","chat_messages":[{"sender":"human","content":[{"type":"text"}]}]},{"other":1}]`, true, true,
			[]string{"uuid", "chat_messages", "chat_messages[].sender", "chat_messages[].content", "chat_messages[].content[].type"},
			[]string{"other"}},
		{`{"messages":[{"role":"user"},{"tool_calls":[]}],"meta":{"k":"v"}}`, false, true,
			[]string{"messages", "messages[].role", "meta", "meta.k"}, []string{"messages[].tool_calls"}},
		{`{"trajectory":[{"action":"ls","observation":"x`, false, false,
			[]string{"trajectory", "trajectory[].action", "trajectory[].observation"}, nil},
		{`{"a":"key\"s","b":1}`, false, true, []string{"a", "b"}, []string{`key\"s`}},
		{"\n\n  [ 1, 2 ]", true, true, nil, []string{"1"}},
	}
	for _, tt := range tests {
		h := shapeOf([]byte(tt.head))
		if h.Array != tt.array || h.Complete != tt.complete {
			t.Errorf("%s: array=%v complete=%v", tt.head, h.Array, h.Complete)
		}
		for _, p := range tt.has {
			if !h.Paths[p] {
				t.Errorf("%s: missing path %q (have %v)", tt.head, p, h.Paths)
			}
		}
		for _, p := range tt.hasNot {
			if h.Paths[p] {
				t.Errorf("%s: unexpected path %q", tt.head, p)
			}
		}
	}
}

// FuzzScanValues checks that the scanner never panics, splits valid arrays
// exactly as encoding/json does, and does not depend on read sizes.
func FuzzScanValues(f *testing.F) {
	for _, s := range []string{`[{"a":1},{"b":"]"}]`, "{\"a\":1}\n{\"b\":2}", `[1,"x\"",null]`, `[{"a":"\\"}]`, `[`, `"`, `}{`, "[{}]\n{}"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		whole := scanAll(t, string(data), false)
		bytewise := scanAll(t, string(data), true)
		if !reflect.DeepEqual(whole, bytewise) {
			t.Fatalf("read size changes the result:\n%+v\n%+v", whole, bytewise)
		}
		shapeOf(data)
		checkSplit(t, data)
		var arr []json.RawMessage
		if json.Unmarshal(data, &arr) != nil || !bytes.HasPrefix(bytes.TrimLeft(data, " \t\r\n"), []byte("[")) {
			return // not an array (null decodes into a nil slice too)
		}
		if len(whole.Problems) != 0 || len(whole.Values) != len(arr) {
			t.Fatalf("valid array of %d: got %d values, problems %v", len(arr), len(whole.Values), whole.Problems)
		}
		for i := range arr {
			var a, b any
			if json.Unmarshal(arr[i], &a) != nil || json.Unmarshal([]byte(whole.Values[i]), &b) != nil || !reflect.DeepEqual(a, b) {
				t.Fatalf("value %d: %s vs %s", i, arr[i], whole.Values[i])
			}
		}
	})
}

// checkSplit compares splitArray and splitObject with encoding/json: on
// valid input they must find the same elements and members.
func checkSplit(t *testing.T, data []byte) {
	var arr []json.RawMessage
	if json.Unmarshal(data, &arr) == nil && bytes.HasPrefix(bytes.TrimLeft(data, " \t\r\n"), []byte("[")) {
		var got []string
		err := splitArray(data, func(i, off int, elem []byte) {
			if !bytes.Equal(data[off:off+len(elem)], elem) {
				t.Fatalf("splitArray element %d: offset %d does not hold it", i, off)
			}
			got = append(got, string(elem))
		})
		if err != nil {
			t.Fatalf("splitArray on a valid array: %v", err)
		}
		if len(got) != len(arr) {
			t.Fatalf("splitArray: %d elements, want %d", len(got), len(arr))
		}
		for i := range arr {
			if !bytes.Equal(bytes.TrimSpace(arr[i]), []byte(got[i])) {
				t.Fatalf("splitArray element %d: %q, want %q", i, got[i], arr[i])
			}
		}
	}
	// encoding/json turns the bytes of a key that are not UTF-8 into U+FFFD,
	// which splitObject leaves as they are: no oracle for such keys.
	var obj map[string]json.RawMessage
	if utf8.Valid(data) && json.Unmarshal(data, &obj) == nil && bytes.HasPrefix(bytes.TrimLeft(data, " \t\r\n"), []byte("{")) {
		fields, err := splitObject(data)
		if err != nil {
			t.Fatalf("splitObject on a valid object: %v", err)
		}
		last := map[string]string{}
		for _, f := range fields {
			if !bytes.Equal(data[f.Offset:f.Offset+len(f.Value)], f.Value) {
				t.Fatalf("splitObject %q: offset %d does not hold its value", f.Key, f.Offset)
			}
			last[f.Key] = string(f.Value)
		}
		if len(last) != len(obj) {
			t.Fatalf("splitObject: %d keys, want %d", len(last), len(obj))
		}
		for k, v := range obj {
			if !bytes.Equal(bytes.TrimSpace(v), []byte(last[k])) {
				t.Fatalf("splitObject %q: %q, want %q", k, last[k], v)
			}
		}
	}
}

func TestSplit(t *testing.T) {
	for _, s := range []string{`[]`, ` [ 1 , "a\\" , {"b":[1,{"c":"]"}]} ] `, `{"a":1,"b":{"c":[2]},"\u0064":"x"}`, `{}`, `{"a":{"a":1}}`} {
		checkSplit(t, []byte(s))
	}
	for _, bad := range []string{`[1 2]`, `[1,`, `{"a" 1}`, `{"a":}`, `{"a":1}x`, `[}`, `"s"`} {
		_, errO := splitObject([]byte(bad))
		errA := splitArray([]byte(bad), func(int, int, []byte) {})
		if errO == nil && errA == nil {
			t.Errorf("%s: accepted", bad)
		}
	}
}
