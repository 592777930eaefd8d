package plan

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/compactbench/compactbench/internal/exitcode"
	"github.com/compactbench/compactbench/internal/tokens"
)

// seeds is the repository's seed corpus, as reached from this package.
const seeds = "../../corpora/seeds"

// TestForRunBadValues: each bad value is a *plan.Error naming its flag or
// key, exits 2, and nothing is written (the output directory is not
// created).
func TestForRunBadValues(t *testing.T) {
	dir := t.TempDir()
	missing := filepath.Join(dir, "missing.yaml")
	for _, c := range []struct {
		name string
		edit func(*Input)
		flag string // Error.Flag
		text string // in the message
	}{
		{"no paths", func(in *Input) { in.Paths = nil }, "", "no input paths"},
		{"jobs", func(in *Input) { in.Jobs = 0 }, "jobs", "--jobs"},
		{"format", func(in *Input) { in.Format = "csv,pdf" }, "format", "--format"},
		{"input format", func(in *Input) { in.InputFormat = "word" }, "input-format", "--input-format"},
		{"max-line", func(in *Input) { in.Limits.MaxLine = "lots" }, "max-line", "--max-line"},
		{"max-line too big", func(in *Input) { in.Limits.MaxLine = "3GiB" }, "max-line", "--max-line"},
		{"max-depth", func(in *Input) { in.Limits.MaxDepth = 0 }, "max-depth", "--max-depth"},
		{"max-problems", func(in *Input) { in.Limits.MaxProblems = 0 }, "max-problems", "--max-problems"},
		{"max-decompressed", func(in *Input) { in.Limits.MaxDecompressed = "-1" }, "max-decompressed", "--max-decompressed"},
		{"rulers", func(in *Input) { in.Rulers = "chars4,yardstick" }, "rulers", "--rulers"},
		{"ruler", func(in *Input) { in.Metric.Ruler = "yardstick" }, "ruler", "--ruler"},
		{"calibration", func(in *Input) { in.Metric.Calibration = missing }, "calibration", "--calibration"},
		{"models", func(in *Input) { in.Metric.Models = missing }, "models", "--models"},
		{"overhead", func(in *Input) { in.Overhead = "middle" }, "overhead", "--overhead"},
		{"config", func(in *Input) { in.Strategy.Config = missing }, "config", "--config"},
		{"mode", func(in *Input) { in.Strategy.Mode, in.Strategy.ModeSet = "twice", true }, "mode", "--mode"},
		{"window", func(in *Input) { in.Strategy.Window, in.Strategy.WindowSet = -1, true }, "window", "--window"},
		{"strategies", func(in *Input) { in.Strategy.Strategies = "mask,nosuch" }, "strategies", "--strategies"},
		{"set without =", func(in *Input) { in.Set = []string{"mask.keep"} }, "set", "mask.keep"},
		{"set unknown strategy", func(in *Input) { in.Set = []string{"nosuch.x=1"} }, "set", "nosuch"},
		{"set out of range", func(in *Input) { in.Set = []string{"mask.keep=-1"} }, "set", "mask.keep"},
		{"set rule set", func(in *Input) { in.Set = []string{"codelet.rules=nosuchset"} }, "set", "codelet.rules"},
		{"set ruler", func(in *Input) { in.Set = []string{"window.ruler=yardstick"} }, "set", "window.ruler"},
		{"set anchor key", func(in *Input) { in.Set = []string{"anchors.x=1"} }, "set", "anchors.x"},
		{"set threshold not a number", func(in *Input) { in.Set = []string{"anchors.threshold=high"} }, "set", "anchors.threshold"},
		{"set threshold of no set", func(in *Input) { in.Set = []string{"anchors.nosuch.threshold=0.5"} }, "set", "anchors.nosuch.threshold"},
		{"threshold without rule sets", func(in *Input) {
			in.Set, in.Anchors.Rules = []string{"anchors.threshold=0.5"}, []string{"none"}
		}, "set", "--rules none"},
		{"rules", func(in *Input) { in.Anchors.Rules = []string{"nosuchset"} }, "rules", "--rules"},
		{"labels", func(in *Input) { in.Anchors.Labels = []string{missing} }, "labels", "--labels"},
		{"labels dir without labels", func(in *Input) { in.Anchors.Labels = []string{dir} }, "labels", "--labels"},
		{"evidence", func(in *Input) { in.Anchors.Evidence = "hunch" }, "evidence", "--evidence"},
	} {
		t.Run(c.name, func(t *testing.T) {
			out := filepath.Join(dir, "out")
			in := Defaults()
			in.Paths, in.Out = []string{seeds}, out
			c.edit(&in)
			p, err := ForRun(in)
			var pe *Error
			if !errors.As(err, &pe) {
				t.Fatalf("ForRun = %v, %v; want a *plan.Error", p, err)
			}
			if pe.Flag != c.flag || !strings.Contains(err.Error(), c.text) {
				t.Errorf("error %q of flag %q; want flag %q and %q in the text", err, pe.Flag, c.flag, c.text)
			}
			if code := exitcode.Of(err); code != exitcode.Usage {
				t.Errorf("exit %d, want 2", code)
			}
			if _, err := os.Stat(out); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("the output directory exists after a rejected plan (%v)", err)
			}
		})
	}
}

// TestForRunResolves: a good command line resolves into typed values, the
// rule set every strategy names among them.
func TestForRunResolves(t *testing.T) {
	in := Defaults()
	in.Paths, in.Out = []string{seeds}, filepath.Join(t.TempDir(), "out")
	in.Set = []string{"mask.keep=20", "anchors.codelet.threshold=0.9"}
	in.Strategy.Window, in.Strategy.WindowSet = 60000, true
	p, err := ForRun(in)
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Files) == 0 || p.Config.Compaction.Window != 60000 || p.Config.Anchors == nil {
		t.Fatalf("plan %+v", p)
	}
	for _, name := range []string{"codelet", "fspec"} {
		if rs := p.Config.RuleSets[name]; rs == nil || rs.Name != name {
			t.Errorf("strategy rule set %s: %v", name, rs)
		}
	}
	for _, s := range p.Config.Anchors.Sets {
		if s.Name == "codelet" && s.Threshold != 0.9 {
			t.Errorf("codelet threshold %v, want 0.9", s.Threshold)
		}
	}
	// A strategy's rule set is the run's own when --rules gives one of
	// that name: the same value, not a second lookup.
	if p.Config.RuleSets["codelet"] != findSet(p, "codelet") {
		t.Error("codelet's strategy rule set is not the run's codelet set")
	}
}

func findSet(p *Run, name string) any {
	for _, s := range p.Config.Anchors.Sets {
		if s.Name == name {
			return s
		}
	}
	return nil
}

// TestForTuneBadValues: tune's bad values, each before any replay.
func TestForTuneBadValues(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct {
		name string
		in   TuneInput
		flag string
		text string
	}{
		{"no paths", TuneInput{}, "", "no input paths"},
		{"format", TuneInput{Format: "json"}, "format", "tune --format"},
		{"grid", TuneInput{Set: []string{"mask.keep"}}, "set", "KEY=GRID"},
		{"grid too big", TuneInput{Set: []string{"mask.keep=1:40:1", "codelet.keep_turns=1:40:1"}}, "set", "settings"},
		{"grid value", TuneInput{Set: []string{"mask.keep=5,-1"}}, "set", "mask.keep"},
		{"grid rule set", TuneInput{Set: []string{"codelet.rules=nosuchset"}}, "set", "codelet.rules"},
		{"grid anchor key", TuneInput{Set: []string{"anchors.x=1,2"}}, "set", "anchors.x"},
		{"grid threshold", TuneInput{Set: []string{"anchors.threshold=a,b"}}, "set", "anchors.threshold"},
		{"jobs", TuneInput{Jobs: -1}, "jobs", "--jobs"},
		{"ruler", TuneInput{Metric: MetricInput{Ruler: "yardstick"}}, "ruler", "--ruler"},
		{"cv folds", TuneInput{CV: 1, CVSet: true}, "cv", "--cv"},
		{"cv with grid", TuneInput{CV: 5, CVSet: true, Set: []string{"mask.keep=1,2"}}, "set", "no --set grid"},
		{"cv floor", TuneInput{CV: 5, CVSet: true, PrecisionFloor: 2}, "precision-floor", "--precision-floor"},
		{"cv rule sets", TuneInput{CV: 5, CVSet: true}, "rules", "exactly one rule set"},
	} {
		t.Run(c.name, func(t *testing.T) {
			in := c.in
			if c.name != "no paths" {
				in.Paths = []string{seeds}
			}
			if in.Jobs == 0 {
				in.Jobs = 1
			}
			if in.Format == "" {
				in.Format = "csv"
			}
			if in.Metric.Ruler == "" {
				in.Metric.Ruler = "calibrated"
			}
			in.Strategy.Mode = "replay"
			in.Out = filepath.Join(dir, "out")
			_, err := ForTune(in)
			var pe *Error
			if !errors.As(err, &pe) || pe.Flag != c.flag || !strings.Contains(err.Error(), c.text) {
				t.Errorf("ForTune = %v (flag %v); want flag %q and %q", err, pe, c.flag, c.text)
			}
			if exitcode.Of(err) != exitcode.Usage {
				t.Errorf("exit %d, want 2", exitcode.Of(err))
			}
			if _, err := os.Stat(in.Out); !errors.Is(err, os.ErrNotExist) {
				t.Error("tune wrote its output directory")
			}
		})
	}
}

// TestForTuneSettings: one configuration per point of the grid, each with
// its value set.
func TestForTuneSettings(t *testing.T) {
	in := TuneInput{Paths: []string{seeds}, Jobs: 1, Format: "csv", Metric: MetricInput{Ruler: "calibrated"},
		Strategy: StrategyInput{Mode: "replay"}, Set: []string{"mask.keep=2,10", "anchors.threshold=0.6,0.9"}}
	tp, err := ForTune(in)
	if err != nil {
		t.Fatal(err)
	}
	if len(tp.Settings) != 4 {
		t.Fatalf("%d settings, want 4", len(tp.Settings))
	}
	for _, s := range tp.Settings {
		if got := strings.Join(s.Values, ","); got == "" || s.Config.Compaction == nil || s.Config.RuleSets["codelet"] == nil {
			t.Errorf("setting %v: %+v", s.Values, s.Config)
		}
	}
}

// TestForRunResolvesRulers: the plan hands analysis its rulers as values,
// per tokenizer generation of the model table --models names, with the
// flags' choices; the names stay beside them for the hash and the reports.
func TestForRunResolvesRulers(t *testing.T) {
	dir := t.TempDir()
	models := filepath.Join(dir, "models.yaml")
	table := "tokenizers: {claude-3: 1, wide: 2}\nmodels:\n  - {pattern: \"wide*\", tokenizer: wide, windows: [1000]}\n"
	if err := os.WriteFile(models, []byte(table), 0o644); err != nil {
		t.Fatal(err)
	}
	in := Defaults()
	in.Paths, in.Out = []string{seeds}, filepath.Join(dir, "out")
	in.Rulers, in.Metric.Ruler, in.Metric.Models, in.Overhead = "all", "chars4msg", models, "first"
	p, err := ForRun(in)
	if err != nil {
		t.Fatal(err)
	}
	rs := p.Config.Rulers
	if rs == nil || rs.Metric() != tokens.RulerChars4Msg || len(rs.Measured()) != tokens.NumRulers || rs.Overhead() != tokens.AnchorFirst {
		t.Fatalf("rulers %+v", rs)
	}
	if p.Overhead != tokens.AnchorFirst || p.Config.Overhead != "first" || p.Config.Ruler != "chars4msg" || len(p.Config.RulerNames) != tokens.NumRulers {
		t.Errorf("names beside the values: %+v", p.Config)
	}
	if gr := rs.ForModel("wide-9"); gr.Name != "wide" || gr.Metric.ID() != tokens.RulerChars4Msg {
		t.Errorf("wide-9: generation %s, metric %s", gr.Name, gr.Metric.Name())
	}
	tp, err := ForTune(TuneInput{Paths: []string{seeds}, Jobs: 1, Format: "csv", Metric: MetricInput{Ruler: "chars4"},
		Strategy: StrategyInput{Mode: "replay"}, Set: []string{"mask.keep=2,10"}})
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range tp.Settings {
		if rs := s.Config.Rulers; rs == nil || rs.Metric() != tokens.RulerChars4 || len(rs.Measured()) != 1 {
			t.Errorf("tune setting %v: rulers %+v", s.Values, rs)
		}
	}
}

// TestForRunResolvesStrategies: the plan lists the enabled strategies in
// table order with their parameters and the rule set each names, so a
// replay never looks a strategy up by id.
func TestForRunResolvesStrategies(t *testing.T) {
	in := Defaults()
	in.Paths, in.Out = []string{seeds}, filepath.Join(t.TempDir(), "out")
	in.Strategy.Strategies = "mask,codelet"
	in.Set = []string{"codelet.rules=fspec", "mask.keep=7"}
	p, err := ForRun(in)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, s := range p.Config.Strategies {
		got = append(got, s.Spec.ID+":"+s.RuleSet)
		if s.Params != p.Config.Compaction.Params[s.Spec.ID] {
			t.Errorf("%s: parameters are not the configuration's", s.Spec.ID)
		}
	}
	if strings.Join(got, ",") != "codelet:fspec,mask:" {
		t.Errorf("strategies %v, want codelet (rule set fspec) then mask", got)
	}
	if p.Config.RuleSets["fspec"] == nil {
		t.Error("the rule set codelet names is not resolved")
	}
}
