package loader

import (
	"strings"
	"testing"

	"github.com/compactbench/compactbench/internal/transcript"
)

// checkArgFields compares argFields with Block.InputFields decoding the
// JSON object jsonObject renders of the same arguments.
func checkArgFields(t *testing.T, keys, vals []string) {
	t.Helper()
	input := jsonObject(keys, vals)
	got := transcript.Block{Kind: transcript.BlockToolUse, Input: input}
	argFields(&got, keys, vals)
	got.InputFields() // what register does next: nothing when a field is set
	want := transcript.Block{Kind: transcript.BlockToolUse, Input: input}
	want.InputFields()
	if got.Path != want.Path || got.Command != want.Command {
		t.Errorf("arguments %q = %q: path %q command %q, InputFields finds path %q command %q",
			keys, vals, got.Path, got.Command, want.Path, want.Command)
	}
}

// TestArgFieldsMatchesInputFields checks the fields a text call's
// arguments give against decoding them: repeated keys, empty values, the
// order of the path keys, characters JSON escapes, values not UTF-8.
func TestArgFieldsMatchesInputFields(t *testing.T) {
	tests := []struct{ keys, vals []string }{
		{nil, nil},
		{[]string{"command", "path"}, []string{"view", "/a/b.go"}},
		{[]string{"path", "file_path"}, []string{"/p", "/f"}},
		{[]string{"path", "notebook_path"}, []string{"/p", "/n.ipynb"}},
		{[]string{"file_path", "path"}, []string{"", "/p"}},
		{[]string{"path", "path"}, []string{"/first", "/second"}},
		{[]string{"path", "path"}, []string{"/first", ""}},
		{[]string{"command", "command"}, []string{"ls", ""}},
		{[]string{"command"}, []string{""}},
		{[]string{"command"}, []string{"echo '<a>' && cat \"x\" | grep \\d\n\tdone\u2028"}},
		{[]string{"path"}, []string{"/bad\xff.go"}},
		{[]string{"command", "path"}, []string{"ls\xc3", "/ok"}},
		{[]string{"command", "path"}, []string{"ls", "/ok\xc3"}},
		{[]string{"Path", "COMMAND"}, []string{"/x", "ls"}},
		{[]string{"path\xff", "other"}, []string{"/x", "\xff"}},
		{[]string{"file_path"}, []string{strings.Repeat("é", 5000)}},
	}
	for _, tc := range tests {
		checkArgFields(t, tc.keys, tc.vals)
	}
}

// FuzzArgFields checks argFields against InputFields on three arguments
// whose names and values the fuzzer picks.
func FuzzArgFields(f *testing.F) {
	f.Add("path", "/a", "command", "ls", "file_path", "")
	f.Add("path", "\xff", "path", "/b", "command", "\"")
	f.Fuzz(func(t *testing.T, k1, v1, k2, v2, k3, v3 string) {
		checkArgFields(t, []string{k1, k2, k3}, []string{v1, v2, v3})
	})
}
