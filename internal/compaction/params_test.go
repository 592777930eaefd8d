package compaction

import "testing"

func TestRuleSetOf(t *testing.T) {
	c := DefaultConfig()
	want := map[string]string{"codelet": "codelet", "fspec": "fspec", "structured": "tuned", "mask": "", "window": "", "recorded": ""}
	for id, rules := range want {
		if got := RuleSetOf(c.Params[id]); got != rules {
			t.Errorf("%s: %q, want %q", id, got, rules)
		}
	}
	if err := c.Set("codelet.rules", "mine"); err != nil {
		t.Fatal(err)
	}
	if got := RuleSetOf(c.Params["codelet"]); got != "mine" {
		t.Errorf("after --set: %q", got)
	}
	if RuleSetOf(nil) != "" || RuleSetOf(3) != "" {
		t.Error("non-struct params")
	}
}
