package anchors

import "testing"

// FuzzParseLabelsLenient: any label file content yields labels and problems
// without panicking; every problem names a line of the file, and the
// strict parser fails exactly when the lenient one reports a problem.
func FuzzParseLabelsLenient(f *testing.F) {
	f.Add([]byte(`{"transcript":"s","turn":0,"type":"task-completion","note":"x"}` + "\n"))
	f.Add([]byte("# comment\n{\"transcript\":\"s\",\"turn\":-1,\"type\":\"none\"}\nnot json\n[1]\n"))
	f.Add([]byte(`{"transcript":"","turn":1.5,"type":"done"}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		labels, problems := ParseLabelsLenient(data, "f.jsonl")
		for _, p := range problems {
			if p.Line < 1 || p.Reason == "" {
				t.Fatalf("problem %+v", p)
			}
		}
		strict, err := ParseLabels(data, "f.jsonl")
		if (err != nil) != (len(problems) > 0) || (err == nil && len(strict) != len(labels)) {
			t.Fatalf("strict: %d labels, %v; lenient: %d labels, %d problems", len(strict), err, len(labels), len(problems))
		}
	})
}
