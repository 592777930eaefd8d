package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/compactbench/compactbench/internal/figures"
	"github.com/compactbench/compactbench/internal/report"
	"github.com/compactbench/compactbench/internal/testutil"
)

// TestVerdictGoldenCorpora: the verdict on corpora/ at the models' windows
// and at 60,000 tokens (most sessions reach it), as the terminal prints it.
func TestVerdictGoldenCorpora(t *testing.T) {
	var got strings.Builder
	for _, window := range []string{"", "60000"} {
		args := []string{"run", "--no-progress", "--format", "table", "-o", t.TempDir()}
		if window != "" {
			args = append(args, "--window", window)
		}
		code, stdout, stderr := runCLI(t, append(args, "../../corpora")...)
		if code != 0 {
			t.Fatalf("exit %d: %s", code, stderr)
		}
		verdict, _, ok := strings.Cut(stdout, "\n\n")
		if !ok || !strings.HasPrefix(verdict, "Verdict\n") {
			t.Fatalf("the output does not start with the verdict:\n%s", stdout)
		}
		fmt.Fprintf(&got, "# window %q\n%s\n\n", window, verdict)
	}
	golden(t, "verdict/corpora.txt", []byte(got.String()))
}

// TestTerminalFits100Columns: the default terminal view is at most 100
// columns wide; --wide is wider.
func TestTerminalFits100Columns(t *testing.T) {
	for _, wide := range []bool{false, true} {
		args := []string{"run", "--no-progress", "--format", "table", "-o", t.TempDir(), "--window", "20000"}
		if wide {
			args = append(args, "--wide")
		}
		code, stdout, stderr := runCLI(t, append(args, "../../corpora")...)
		if code != 0 {
			t.Fatalf("exit %d: %s", code, stderr)
		}
		widest := 0
		for _, line := range strings.Split(stdout, "\n") {
			widest = max(widest, len([]rune(line)))
		}
		if !wide && widest > 100 {
			t.Errorf("default view is %d columns wide:\n%s", widest, stdout)
		}
		if wide && (widest <= 100 || !strings.Contains(stdout, "median need recall")) {
			t.Errorf("--wide is %d columns wide and lacks figures", widest)
		}
	}
}

// TestVerdictRealCorpus checks the verdict on the real corpus against the
// runs and events tables of the same run: invariants, not a golden file,
// so that a new folder in the corpus needs no edit.
func TestVerdictRealCorpus(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the real corpus")
	}
	rc := testutil.RealCorpus(t)
	dir := t.TempDir()
	if code, _, stderr := runCLI(t, "run", "-q", "--format", "csv,json", "-o", dir, rc); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var sum report.Summary
	data, err := os.ReadFile(filepath.Join(dir, "summary.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &sum); err != nil {
		t.Fatal(err)
	}
	type tally struct{ runs, fit, overflowRuns, overflows, invalid int }
	by := map[string]*tally{}
	for _, r := range readCSV(t, filepath.Join(dir, "runs.csv")) {
		tl := by[r["strategy"]]
		if tl == nil {
			tl = &tally{}
			by[r["strategy"]] = tl
		}
		tl.runs++
		ov, _ := strconv.Atoi(r["overflows"])
		tl.overflows += ov
		if ov == 0 {
			tl.fit++
		} else {
			tl.overflowRuns++
		}
		if (ov == 0) != (r["fits_window"] == "true") {
			t.Errorf("%s %s: fits_window %s with %d overflows", r["path"], r["strategy"], r["fits_window"], ov)
		}
	}
	for _, e := range readCSV(t, filepath.Join(dir, "events.csv")) {
		o, _ := strconv.Atoi(e["orphan_results"])
		d, _ := strconv.Atoi(e["dangling_calls"])
		by[e["strategy"]].invalid += o + d
	}
	v := sum.Verdict
	if len(v.Ranked)+len(v.Others) != len(by) {
		t.Fatalf("verdict has %d+%d strategies, runs.csv %d", len(v.Ranked), len(v.Others), len(by))
	}
	for _, l := range v.Ranked {
		tl := by[l.Strategy]
		if tl.overflowRuns != 0 || tl.invalid != 0 || l.Strategy == "recorded" {
			t.Errorf("%s ranked with %d overflowing runs and %d invalid requests", l.Strategy, tl.overflowRuns, tl.invalid)
		}
		if want := fmt.Sprintf("fits %d/%d sessions", tl.runs, tl.runs); !strings.HasPrefix(l.Why, want) {
			t.Errorf("%s: %q does not start %q", l.Strategy, l.Why, want)
		}
		st := sum.Strategies[l.Strategy]
		if st.Count(figures.FitRuns) != int64(tl.fit) || st.Value(figures.CostRatio) == nil {
			t.Errorf("%s: summary fit_runs %d, runs.csv %d; cost ratio %v", l.Strategy, st.Count(figures.FitRuns), tl.fit, st.Value(figures.CostRatio))
		}
	}
	for _, l := range v.Others {
		tl := by[l.Strategy]
		if tl.overflowRuns == 0 && tl.invalid == 0 && l.Strategy != "recorded" {
			t.Errorf("%s not ranked, but it fit every session with valid requests: %s", l.Strategy, l.Why)
		}
		want := fmt.Sprintf("overflowed in %d/%d sessions (%d calls over the window)", tl.overflowRuns, tl.runs, tl.overflows)
		if strings.Contains(l.Why, "overflowed") != (tl.overflowRuns > 0) || tl.overflowRuns > 0 && !strings.Contains(l.Why, want) {
			t.Errorf("%s: %q, want it to say %q", l.Strategy, l.Why, want)
		}
		if tl.invalid > 0 && !strings.Contains(l.Why, strconv.Itoa(tl.invalid)+" invalid requests") {
			t.Errorf("%s: %q does not count %d invalid requests", l.Strategy, l.Why, tl.invalid)
		}
	}
	// The ranking rule, pair by pair.
	for i := 1; i < len(v.Ranked); i++ {
		a, b := v.Ranked[i-1], v.Ranked[i]
		sa, sb := sum.Strategies[a.Strategy], sum.Strategies[b.Strategy]
		if a.Layer > b.Layer || a.Layer == b.Layer && worse(sa.Value(figures.NeedRecall), sb.Value(figures.NeedRecall)) {
			t.Errorf("%s (layer %d, need recall %v) ranked above %s (layer %d, need recall %v)", a.Strategy, a.Layer,
				deref(sa.Value(figures.NeedRecall)), b.Strategy, b.Layer, deref(sb.Value(figures.NeedRecall)))
		}
	}
	for _, a := range v.Ranked {
		for _, b := range v.Ranked {
			sa, sb := sum.Strategies[a.Strategy], sum.Strategies[b.Strategy]
			if a.Layer == 1 && dominates(sb, sa) {
				t.Errorf("%s is in layer 1 but %s beats it on compression and need recall", a.Strategy, b.Strategy)
			}
		}
	}
}

func deref(p *float64) float64 {
	if p == nil {
		return -1
	}
	return *p
}

func worse(a, b *float64) bool { return deref(a) < deref(b) }

func dominates(b, a *report.StrategyStats) bool {
	bc, bn, ac, an := deref(b.Value(figures.MedianCompression)), deref(b.Value(figures.NeedRecall)), deref(a.Value(figures.MedianCompression)), deref(a.Value(figures.NeedRecall))
	return bc >= ac && bn >= an && (bc > ac || bn > an)
}

// TestRunSetsAnchorThreshold: run takes --set anchors.SET.threshold as tune
// does; a set the run lacks is a usage error.
func TestRunSetsAnchorThreshold(t *testing.T) {
	thresholds := func(args ...string) map[string]float64 {
		dir := t.TempDir()
		if code, _, stderr := runCLI(t, append(append([]string{"run", "-q", "--format", "json", "-o", dir}, args...), seeds)...); code != 0 {
			t.Fatalf("exit %d: %s", code, stderr)
		}
		var sum report.Summary
		data, _ := os.ReadFile(filepath.Join(dir, "summary.json"))
		if err := json.Unmarshal(data, &sum); err != nil {
			t.Fatal(err)
		}
		out := map[string]float64{}
		for _, rs := range sum.Anchors {
			out[rs.Name] = rs.Threshold
		}
		return out
	}
	before, after := thresholds(), thresholds("--set", "anchors.tuned.threshold=0.95")
	if len(after) == 0 || len(after) != len(before) {
		t.Fatalf("rule sets %v, before the --set %v", after, before)
	}
	for name, got := range after {
		want := before[name] // the other sets keep their own thresholds
		if name == "tuned" {
			want = 0.95
		}
		if got != want {
			t.Errorf("%s: threshold %v, want %v", name, got, want)
		}
	}
	for _, bad := range []string{"anchors.nope.threshold=0.9", "anchors.tuned.threshold=high", "anchors.tuned.weight=1"} {
		if code, _, stderr := runCLI(t, "run", "-q", "-o", t.TempDir(), "--set", bad, seeds); code != 2 {
			t.Errorf("--set %s: exit %d (%s), want 2", bad, code, stderr)
		}
	}
}
