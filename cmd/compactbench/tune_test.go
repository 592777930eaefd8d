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
	"github.com/compactbench/compactbench/internal/report"
)

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
			if r["compactions"] != strconv.FormatInt(s.Compactions, 10) || r["median_compression"] != fmtOpt(s.MedianCompression) ||
				r["need_recall"] != fmtOpt(s.NeedRecall) || r["synthetic_anchor_rate"] != fmtOpt(s.SyntheticAnchorRate) {
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
