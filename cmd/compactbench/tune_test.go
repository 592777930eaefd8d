package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/compactbench/compactbench/internal/anchors"
	"github.com/compactbench/compactbench/internal/figures"
	"github.com/compactbench/compactbench/internal/report"
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
		ax, err := parseGrid(tc.spec)
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

func TestSettingsProduct(t *testing.T) {
	got, err := settings([]gridAxis{{"a", []string{"1", "2"}}, {"b", []string{"x", "y", "z"}}})
	if err != nil || len(got) != 6 || strings.Join(got[0], ",") != "1,x" || strings.Join(got[1], ",") != "1,y" || strings.Join(got[5], ",") != "2,z" {
		t.Errorf("%v %v", got, err)
	}
	if got, _ := settings(nil); len(got) != 1 || len(got[0]) != 0 {
		t.Errorf("no axis: %v", got)
	}
	big := gridAxis{"a", make([]string, 40)}
	if _, err := settings([]gridAxis{big, big}); err == nil {
		t.Error("1600 settings accepted")
	}
	for key, want := range map[string]string{"anchors.threshold": "", "anchors.tuned.threshold": "tuned"} {
		if set, ok := thresholdKey(key); !ok || set != want {
			t.Errorf("%s: %q %v", key, set, ok)
		}
	}
	for _, key := range []string{"anchors.x", "anchors..threshold", "mask.keep", "tuned.threshold"} {
		if _, ok := thresholdKey(key); ok {
			t.Errorf("%s taken as a threshold key", key)
		}
	}
}

// TestTuneGolden: the tune table over the seeds, byte for byte.
func TestTuneGolden(t *testing.T) {
	dir := t.TempDir()
	code, stdout, stderr := runCLI(t, "tune", "--set", "anchors.threshold=0.6:0.9:0.1", "--set", "mask.keep=2,10",
		"--strategies", "codelet,fspec,mask", "--window", reportWindow, "-j", "3", "-o", dir, seeds)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	golden(t, "tune/stdout.txt", []byte(stdout))
	data, err := os.ReadFile(filepath.Join(dir, "tune.csv"))
	if err != nil {
		t.Fatal(err)
	}
	golden(t, "tune/tune.csv", data)
	if fi, err := os.Stat(filepath.Join(dir, "tune.parquet")); err != nil || fi.Size() == 0 {
		t.Errorf("tune.parquet: %v", err)
	}
	if !strings.Contains(stderr, "setting 8/8 anchors.threshold=0.9 mask.keep=10") {
		t.Errorf("stderr %q", stderr)
	}
	// -j does not change the table.
	dir1 := t.TempDir()
	runCLI(t, "tune", "-q", "--set", "anchors.threshold=0.6:0.9:0.1", "--set", "mask.keep=2,10",
		"--strategies", "codelet,fspec,mask", "--window", reportWindow, "-j", "1", "-o", dir1, seeds)
	data1, _ := os.ReadFile(filepath.Join(dir1, "tune.csv"))
	if string(data1) != string(data) {
		t.Error("tune.csv differs between -j 1 and -j 3")
	}
}

// TestTuneAgreesWithRun: a tune row is what run reports with the same
// setting: mask.keep through --set, a rule set's threshold through a rules
// file that has it.
func TestTuneAgreesWithRun(t *testing.T) {
	dir := t.TempDir()
	if code, _, stderr := runCLI(t, "tune", "-q", "--set", "anchors.threshold=0.8", "--set", "mask.keep=2",
		"--window", reportWindow, "--format", "csv", "-o", dir, seeds); code != 0 {
		t.Fatalf("tune: exit %d: %s", code, stderr)
	}
	rows := readCSV(t, filepath.Join(dir, "tune.csv"))

	tuned, _ := anchors.Builtin("tuned")
	copy, err := tuned.WithThreshold(0.8)
	if err != nil {
		t.Fatal(err)
	}
	rules := filepath.Join(dir, "tuned.yaml")
	os.WriteFile(rules, copy.Source, 0o644)
	codelet, _ := anchors.Builtin("codelet")
	cc, _ := codelet.WithThreshold(0.8)
	codeletFile := filepath.Join(dir, "codelet.yaml")
	os.WriteFile(codeletFile, cc.Source, 0o644)
	fs, _ := anchors.Builtin("fspec")
	fc, _ := fs.WithThreshold(0.8)
	fspecFile := filepath.Join(dir, "fspec.yaml")
	os.WriteFile(fspecFile, fc.Source, 0o644)
	out := filepath.Join(dir, "run")
	if code, _, stderr := runCLI(t, "run", "-q", "--format", "json", "--set", "mask.keep=2", "--window", reportWindow,
		"--rules", codeletFile, "--rules", fspecFile, "--rules", rules, "-o", out, seeds); code != 0 {
		t.Fatalf("run: exit %d: %s", code, stderr)
	}
	data, _ := os.ReadFile(filepath.Join(out, "summary.json"))
	var sum report.Summary
	if err := json.Unmarshal(data, &sum); err != nil {
		t.Fatal(err)
	}
	checked := 0
	for _, r := range rows {
		if st := r["strategy"]; st != "" {
			s := sum.Strategies[st]
			if s == nil {
				t.Fatalf("run has no %s", st)
			}
			if r["compactions"] != strconv.FormatInt(s.Count(figures.Compactions), 10) || r["median_compression"] != fmtOpt(s.Value(figures.MedianCompression)) ||
				r["need_recall"] != fmtOpt(s.Value(figures.NeedRecall)) || r["synthetic_anchor_rate"] != fmtOpt(s.Value(figures.SyntheticAnchorRate)) {
				t.Errorf("%s: tune %v, run %+v", st, r, s)
			}
			checked++
		}
		if name := r["rule_set"]; name != "" {
			for _, a := range sum.Anchors {
				if a.Name == name {
					want := "0.8"
					if slices.Contains(anchors.BaselineSets, name) {
						want = "0.5" // the baselines keep their threshold
					}
					if r["threshold"] != want || r["labels"] != "gold" || r["f1"] != fmtOpt(a.Gold.F1) || r["recall"] != fmtOpt(a.Gold.Recall) {
						t.Errorf("%s: tune %v, run %+v", name, r, a.Gold)
					}
					checked++
				}
			}
		}
	}
	if checked < 12 {
		t.Errorf("only %d figures compared", checked)
	}
}

func fmtOpt(v *float64) string {
	if v == nil {
		return ""
	}
	return report.FormatFloat(*v)
}

func TestTuneUsageErrors(t *testing.T) {
	tests := []struct {
		args []string
		msg  string
	}{
		{[]string{"tune", "--set", "anchors.threshold=0.8"}, "no input paths"},
		{[]string{"tune", "--set", "mask.keep", seeds}, "want KEY=GRID"},
		{[]string{"tune", "--set", "mask.nope=1,2", seeds}, "no parameter"},
		{[]string{"tune", "--set", "mask.keep=x", seeds}, "mask.keep=x"},
		{[]string{"tune", "--set", "anchors.threshold=1.5", seeds}, "between 0 and 1"},
		{[]string{"tune", "--set", "anchors.nope.threshold=0.5", seeds}, `no rule set "nope"`},
		{[]string{"tune", "--set", "anchors.weight=0.5", seeds}, "anchors.threshold and anchors.SET.threshold"},
		{[]string{"tune", "--rules", "none", "--set", "anchors.threshold=0.5", seeds}, "no rule sets"},
		{[]string{"tune", "--format", "html", seeds}, "table, csv and parquet only"},
	}
	for _, tc := range tests {
		code, _, stderr := runCLI(t, append(tc.args, "-o", t.TempDir())...)
		if code != 2 || !strings.Contains(stderr, tc.msg) {
			t.Errorf("%v: exit %d, stderr %q; want 2 and %q", tc.args, code, stderr, tc.msg)
		}
	}
}
