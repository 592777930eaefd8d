package compaction

import (
	"strings"
	"testing"
)

func TestParseConfig(t *testing.T) {
	c, err := ParseConfig([]byte(`
mode: once
window: 60000
strategies: [window, mask]
params:
  mask: {keep: 20}
  window:
    keep_last: 4
    threshold_percent: 0.5
prices:
  - {model: claude-test, input: 1, output: 2}
`), "strategies.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if c.Mode != ModeOnce || c.Window != 60000 || c.Params["mask"].(*MaskParams).Keep != 20 ||
		c.Params["window"].(*WindowParams).KeepLast != 4 || c.Params["window"].(*WindowParams).SystemReserve != 2000 ||
		PriceOf(c.Prices, nil, "claude-test").Output != 2 || PriceOf(c.Prices, nil, "claude-sonnet-4-5").Input != 3 {
		t.Errorf("config = %+v", c)
	}
	var ids []string
	for _, s := range c.Enabled() {
		ids = append(ids, s.ID)
	}
	if strings.Join(ids, ",") != "window,mask" {
		t.Errorf("enabled = %v", ids)
	}
}

func TestParseConfigErrors(t *testing.T) {
	tests := []struct{ yaml, want string }{
		{"mode: sometimes\n", "mode: want replay or once"},
		{"windw: 5\n", "line 1: field windw not found"},
		{"strategies: [window, magic]\n", `unknown strategy "magic"`},
		{"params:\n  window:\n    keep_lst: 4\n", "params.window (from line 3)"},
		{"params:\n  mask: {keep: many}\n", "cannot unmarshal"},
		{"params:\n  nope: {x: 1}\n", `line 2: params: unknown strategy "nope"`},
		{"params:\n  window: {ruler: chars5}\n", `params.window.ruler: unknown ruler "chars5"`},
	}
	for _, tc := range tests {
		_, err := ParseConfig([]byte(tc.yaml), "f.yaml")
		if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.HasPrefix(err.Error(), "f.yaml") {
			t.Errorf("%q: error %v, want one naming f.yaml and containing %q", tc.yaml, err, tc.want)
		}
	}
}

func TestConfigSet(t *testing.T) {
	c := DefaultConfig()
	for _, kv := range [][2]string{{"mask.keep", "5"}, {"codelet.cache_discount", "0"}, {"window", "90000"}, {"mode", "once"},
		{"prune.ruler", "metric"}, {"window.ruler", "o200k"}} {
		if err := c.Set(kv[0], kv[1]); err != nil {
			t.Fatalf("%s=%s: %v", kv[0], kv[1], err)
		}
	}
	if c.Params["mask"].(*MaskParams).Keep != 5 || c.Params["codelet"].(*AnchorParams).CacheDiscount != 0 || c.Window != 90000 || c.Mode != ModeOnce {
		t.Errorf("config = %+v", c)
	}
	for _, bad := range [][2]string{{"mask.kep", "5"}, {"mask", "5"}, {"nope.x", "1"}, {"mask.keep", "lots"}, {"codex.ruler", "bogus"}} {
		if err := c.Set(bad[0], bad[1]); err == nil {
			t.Errorf("%s=%s: no error", bad[0], bad[1])
		}
	}
	if c.Params["mask"].(*MaskParams).Keep != 5 || c.Params["codex"].(*CodexParams).Ruler != "chars4" {
		t.Errorf("a rejected value changed the config: %+v %+v", c.Params["mask"], c.Params["codex"])
	}
	if DefaultConfig().Params["mask"].(*MaskParams).Keep != 10 {
		t.Error("Set changed the defaults")
	}
}
