package tune

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/compactbench/compactbench/internal/analysis"
	"github.com/compactbench/compactbench/internal/anchors"
	"github.com/compactbench/compactbench/internal/exitcode"
	"github.com/compactbench/compactbench/internal/loader"
	"github.com/compactbench/compactbench/internal/plan"
	"github.com/compactbench/compactbench/internal/report"
	"github.com/compactbench/compactbench/internal/transcript"
)

// seeds is the repository's seed corpus, as reached from this package.
const seeds = "../../corpora/seeds"

func TestAxisTouches(t *testing.T) {
	for _, c := range []struct {
		key, strategy, ruleSet string
		want                   bool
	}{
		{"anchors.threshold", "codelet", "codelet", true},
		{"anchors.threshold", "", "tuned", true},
		{"anchors.threshold", "mask", "", false},
		{"anchors.tuned.threshold", "", "tuned", true},
		{"anchors.tuned.threshold", "codelet", "codelet", false},
		{"window", "mask", "", true},
		{"window", "", "tuned", false},
		{"mode", "codelet", "codelet", true},
		{"mask.keep", "mask", "", true},
		{"mask.keep", "codelet", "codelet", false},
		{"codelet.keep_turns", "", "codelet", false},
	} {
		if got := AxisTouches(c.key, c.strategy, c.ruleSet); got != c.want {
			t.Errorf("AxisTouches(%q, %q, %q) = %v, want %v", c.key, c.strategy, c.ruleSet, got, c.want)
		}
	}
}

// TestSweep replays the seeds once per setting of a resolved plan: every
// setting has its own rows, stamped with its own configuration hash, and
// a progress line.
func TestSweep(t *testing.T) {
	tp, err := plan.ForTune(plan.TuneInput{Paths: []string{seeds}, Jobs: 1, Format: "csv",
		Metric: plan.MetricInput{Ruler: "calibrated"}, Anchors: plan.AnchorsInput{Evidence: "all"},
		Strategy: plan.StrategyInput{Mode: "replay", Window: 30000, WindowSet: true, Strategies: "mask,codelet"},
		Set:      []string{"mask.keep=2,10"}})
	if err != nil {
		t.Fatal(err)
	}
	var progress bytes.Buffer
	rows, err := Sweep(context.Background(), tp, "test", analyzeFiles(tp.Files), &progress)
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(progress.String(), "\n"); n != 2 {
		t.Errorf("%d progress lines, want 2:\n%s", n, progress.String())
	}
	hashes := map[int]string{}
	for _, r := range rows {
		if r.ConfigHash == "" || r.RunID == "" {
			t.Fatalf("row %+v is not stamped", r)
		}
		if h, ok := hashes[int(r.Setting)]; ok && h != r.ConfigHash {
			t.Errorf("setting %d has two configuration hashes", r.Setting)
		}
		hashes[int(r.Setting)] = r.ConfigHash
		if r.Strategy == "mask" && !strings.HasPrefix(r.Params, "mask.keep=") {
			t.Errorf("mask row params %q", r.Params)
		}
		if r.Strategy == "codelet" && r.Params != "" {
			t.Errorf("codelet row lists %q, which does not change it", r.Params)
		}
	}
	if len(hashes) != 2 || hashes[1] == hashes[2] {
		t.Errorf("settings' hashes %v; want two different ones", hashes)
	}
}

// analyzeFiles reads and analyses the files one by one, as the command
// does with workers.
func analyzeFiles(files []loader.File) Analyze {
	return func(ctx context.Context, cfg *analysis.Config) (*report.Summary, error) {
		sum := report.NewSummary(report.Meta{Tool: "compactbench"})
		for _, f := range files {
			err := loader.ReadFile(f.Path, loader.Options{}, func(t *transcript.Transcript) error {
				sum.Add(analysis.Analyze(t, cfg))
				return nil
			})
			if err != nil {
				return nil, err
			}
		}
		sum.Finish()
		return sum, nil
	}
}

func TestGoldCVTooFewTranscripts(t *testing.T) {
	set, err := anchors.Builtin("codelet")
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	err = GoldCV(&out, set, nil, 5, 0.6)
	if exitcode.Of(err) != exitcode.Usage || !strings.Contains(err.Error(), "--cv 5") {
		t.Errorf("GoldCV with no transcripts: %v; want a usage error naming --cv", err)
	}
	if out.Len() > 0 {
		t.Errorf("printed %q before failing", out.String())
	}
}

func TestRate(t *testing.T) {
	if got := Rate(0.6666, true); got != "0.67" {
		t.Errorf("Rate = %q", got)
	}
	if got := Rate(0, false); got != "–" {
		t.Errorf("undefined Rate = %q", got)
	}
}
