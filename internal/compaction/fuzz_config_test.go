package compaction

import "testing"

// FuzzParseConfig: any strategies file either fails with an error or gives
// a configuration whose parameters are in range.
func FuzzParseConfig(f *testing.F) {
	f.Add([]byte("mode: once\nwindow: 60000\nstrategies: [codelet, mask]\nparams:\n  mask: {keep: 3}\n  window: {keep_last: 20}\n"))
	f.Add([]byte("params:\n  truncate: {target_fraction: 0.5}\nprices:\n  - {model: m, input: 1, output: 2}\nsummary_prompt_tokens: 10\n"))
	f.Add([]byte("params: {codelet: {rules: tuned, threshold: 2}}\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := ParseConfig(data, "f.yaml")
		if err != nil {
			return
		}
		for _, s := range Specs() {
			if err := checkRanges(s.ID, c.Params[s.ID]); err != nil {
				t.Fatalf("accepted out of range: %v", err)
			}
		}
		if c.Window < 0 {
			t.Fatalf("window %d", c.Window)
		}
	})
}
