package plan

import (
	"slices"
	"strings"
	"testing"
)

func TestParseGrid(t *testing.T) {
	tests := []struct {
		spec string
		want []string
		err  string
	}{
		{"anchors.threshold=0.80:0.95:0.05", []string{"0.80", "0.85", "0.90", "0.95"}, ""},
		{"anchors.threshold=0.5:0.9:0.1", []string{"0.5", "0.6", "0.7", "0.8", "0.9"}, ""},
		{"mask.keep=5,10,20", []string{"5", "10", "20"}, ""},
		{"mask.keep=2:10:4", []string{"2", "6", "10"}, ""},
		{"mask.keep=2:9:4", []string{"2", "6"}, ""},
		{"window=60000", []string{"60000"}, ""},
		{"mode=once,replay", []string{"once", "replay"}, ""},
		{"mask.keep", nil, "want KEY=GRID"},
		{"=5", nil, "want KEY=GRID"},
		{"mask.keep=5,,6", nil, "empty value"},
		{"mask.keep=10:5:1", nil, "FROM ≤ TO"},
		{"mask.keep=1:5:0", nil, "STEP > 0"},
		{"mask.keep=a:5:1", nil, "not a number"},
		{"mask.keep=0:100000:1", nil, "more than"},
	}
	for _, tc := range tests {
		ax, err := ParseGrid(tc.spec)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%s: error %v, want %q", tc.spec, err, tc.err)
			}
			continue
		}
		if err != nil || !slices.Equal(ax.Values, tc.want) {
			t.Errorf("%s: %v %v, want %v", tc.spec, ax.Values, err, tc.want)
		}
	}
}

func TestProduct(t *testing.T) {
	got, err := Product([]Axis{{"a", []string{"1", "2"}}, {"b", []string{"x", "y", "z"}}})
	if err != nil || len(got) != 6 || strings.Join(got[0], ",") != "1,x" || strings.Join(got[1], ",") != "1,y" || strings.Join(got[5], ",") != "2,z" {
		t.Errorf("%v %v", got, err)
	}
	if got, _ := Product(nil); len(got) != 1 || len(got[0]) != 0 {
		t.Errorf("no axis: %v", got)
	}
	big := Axis{"a", make([]string, 40)}
	if _, err := Product([]Axis{big, big}); err == nil {
		t.Error("1600 settings accepted")
	}
	for key, want := range map[string]string{"anchors.threshold": "", "anchors.tuned.threshold": "tuned"} {
		if set, ok := ThresholdKey(key); !ok || set != want {
			t.Errorf("%s: %q %v", key, set, ok)
		}
	}
	for _, key := range []string{"anchors.x", "anchors..threshold", "mask.keep", "tuned.threshold"} {
		if _, ok := ThresholdKey(key); ok {
			t.Errorf("%s taken as a threshold key", key)
		}
	}
}
