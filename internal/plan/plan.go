// Package plan resolves a command line into a plan: every flag, --set
// value, rule set, label file, strategy, ruler, model table and window is
// read and validated once, before any work begins, into typed values. What
// runs below the command line (analysis, compaction, report) is handed
// those values and never looks a name up again.
//
// The package reads only the files the flags name (strategies file, model
// table, calibration, rule files, label files) and walks the input paths to
// find the transcripts and their label files; it writes nothing. Every
// error it returns is an *Error naming its flag or key, and exits 2.
package plan

import (
	"fmt"
	"runtime"
	"strings"

	"github.com/compactbench/compactbench/internal/analysis"
	"github.com/compactbench/compactbench/internal/anchors"
	"github.com/compactbench/compactbench/internal/exitcode"
	"github.com/compactbench/compactbench/internal/loader"
	"github.com/compactbench/compactbench/internal/report"
	"github.com/compactbench/compactbench/internal/tokens"
)

// Error is a flag or key whose value cannot be used. It ends the process
// with exit 2 before any output is written.
type Error struct {
	// Flag is the flag or --set key at fault, without dashes ("jobs",
	// "set", "rules"); "" for the input paths.
	Flag string
	Err  error
}

func (e *Error) Error() string { return e.Err.Error() }

// Unwrap returns the cause.
func (e *Error) Unwrap() error { return e.Err }

// ExitCode is exitcode.Usage: bad usage or unusable input.
func (e *Error) ExitCode() exitcode.Code { return exitcode.Usage }

// bad is an *Error of flag; the message names the flag itself, as the user
// typed it.
func bad(flag, format string, args ...any) error {
	return &Error{Flag: flag, Err: fmt.Errorf(format, args...)}
}

// Input is the run command's flags as given, before resolution.
type Input struct {
	Paths       []string
	Jobs        int
	Out         string
	InputFormat string
	// Format is --format, a comma list of outputs.
	Format           string
	ReportTranscript string
	Strict           bool
	Quiet            bool
	Progress         bool
	Wide             bool
	Cache            string
	Limits           LimitsInput
	Metric           MetricInput
	// Rulers is --rulers, the rulers measured in the calls table.
	Rulers   string
	Overhead string
	Anchors  AnchorsInput
	Strategy StrategyInput
	// Set are the --set values, STRATEGY.PARAM=VALUE or an anchor
	// threshold.
	Set []string
}

// LimitsInput are --max-line, --max-depth, --max-problems and
// --max-decompressed as given.
type LimitsInput struct {
	MaxLine         string
	MaxDepth        int
	MaxProblems     int
	MaxDecompressed string
}

// MetricInput are --ruler, --calibration and --models as given.
type MetricInput struct {
	Ruler       string
	Calibration string
	Models      string
}

// AnchorsInput are --rules, --labels and --evidence as given.
type AnchorsInput struct {
	Rules    []string
	Labels   []string
	Evidence string
}

// StrategyInput are --config, --mode, --window and --strategies as given;
// ModeSet and WindowSet say whether the user gave --mode and --window.
type StrategyInput struct {
	Config     string
	Mode       string
	ModeSet    bool
	Window     int
	WindowSet  bool
	Strategies string
}

// Defaults is the flags' defaults (the CLI declares its flags with them).
func Defaults() Input {
	return Input{
		Jobs: runtime.NumCPU(), Out: "results/latest", Format: DefaultFormats, Progress: true,
		Limits: LimitsInput{MaxLine: "256MiB", MaxDepth: loader.DefaultMaxDepth,
			MaxProblems: loader.DefaultMaxProblems, MaxDecompressed: "16GiB"},
		Metric:   MetricInput{Ruler: tokens.Calibrated},
		Rulers:   strings.Join(tokens.DefaultNames(), ","),
		Overhead: "segments",
		Anchors:  AnchorsInput{Evidence: "all"},
		Strategy: StrategyInput{Mode: "replay"},
	}
}

// Run is a resolved run: what to read, how to analyse it, where to write.
type Run struct {
	Paths       []string
	Jobs        int
	Out         string
	InputFormat string
	// Limits bound what one input file may cost.
	Limits   loader.Limits
	Formats  Formats
	Strict   bool
	Quiet    bool
	Progress bool
	// Wide is --wide: every terminal table and figure.
	Wide bool
	// ReportTranscript is --report-transcript.
	ReportTranscript string
	// Cache is --cache: a directory of per-file results ("" for none).
	Cache string
	// Files are the transcript files under Paths, in path order.
	Files []loader.File
	// Overhead is how the calls table fixes the overhead.
	Overhead tokens.Anchoring
	// Config is the analysis configuration, every name in it resolved.
	Config analysis.Config
	// LabelProblems are label lines that cannot be used (problem rows).
	LabelProblems []anchors.LabelProblem
}

// Formats are the outputs chosen by name with --format.
type Formats struct {
	Table bool
	Files report.Formats
}

// ForRun resolves the run command's flags. It walks the input paths (to
// find the transcripts and the label files among them) and reads the files
// the flags name; it writes nothing.
func ForRun(in Input) (*Run, error) {
	if len(in.Anchors.Rules) == 0 {
		// The default rule sets are parsed (YAML, and their patterns
		// checked) while the flags are resolved and the inputs walked;
		// RuleSets below waits for them. The sets are the same whichever
		// goroutine parses them.
		go anchors.Defaults()
	}
	r := &Run{Paths: in.Paths, Jobs: in.Jobs, Out: in.Out, InputFormat: in.InputFormat, Strict: in.Strict,
		Quiet: in.Quiet, Progress: in.Progress, Wide: in.Wide, ReportTranscript: in.ReportTranscript, Cache: in.Cache}
	var err error
	if r.Limits, err = Limits(in.Limits); err != nil {
		return nil, err
	}
	if r.Formats, err = ParseFormats(in.Format); err != nil {
		return nil, err
	}
	if err := r.metric(in); err != nil {
		return nil, err
	}
	if r.Config.Compaction, err = Compaction(in.Strategy, in.Set); err != nil {
		return nil, err
	}
	thresholds, err := Thresholds(in.Set)
	if err != nil {
		return nil, err
	}
	found, err := r.inputs()
	if err != nil {
		return nil, err
	}
	if r.Config.Anchors, r.LabelProblems, err = AnchorConfig(in.Anchors, found); err != nil {
		return nil, err
	}
	if r.Config.Anchors, err = applyThresholds(r.Config.Anchors, thresholds); err != nil {
		return nil, err
	}
	if err := resolveStrategies(&r.Config); err != nil {
		return nil, err
	}
	return r, nil
}

// metric resolves the rulers, the calibration and the model table.
func (r *Run) metric(in Input) error {
	if err := Metric(&r.Config, in.Metric, in.Rulers, in.Overhead); err != nil {
		return err
	}
	r.Overhead = r.Config.Rulers.Overhead()
	return nil
}

// inputs checks the paths, -j, -o and --input-format, and walks the
// paths; it returns the label files found among the inputs.
func (r *Run) inputs() ([]string, error) {
	if len(r.Paths) == 0 {
		return nil, bad("", "run: no input paths (try: compactbench run corpora/)")
	}
	if err := Jobs(r.Jobs); err != nil {
		return nil, err
	}
	if err := report.CheckOutputDir(r.Out); err != nil {
		return nil, bad("out", "-o: %v", err)
	}
	if err := InputFormat(r.InputFormat); err != nil {
		return nil, err
	}
	inputs, err := loader.Walk(r.Paths, r.Out)
	if err != nil {
		return nil, bad("", "%v", err)
	}
	if len(inputs.Files) == 0 {
		return nil, bad("", "no transcript files under %s", strings.Join(r.Paths, ", "))
	}
	r.Files = inputs.Files
	return inputs.Labels, nil
}
