package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"reflect"
	"runtime"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/schollz/progressbar/v3"
	"github.com/urfave/cli/v2"
	"golang.org/x/term"

	"github.com/compactbench/compactbench/internal/analysis"
	"github.com/compactbench/compactbench/internal/anchors"
	"github.com/compactbench/compactbench/internal/compaction"
	"github.com/compactbench/compactbench/internal/loader"
	"github.com/compactbench/compactbench/internal/report"
	"github.com/compactbench/compactbench/internal/tokens"
	"github.com/compactbench/compactbench/internal/transcript"
)

func init() { commands = append(commands, newRunCommand) }

func newRunCommand() *cli.Command {
	return &cli.Command{
		Name:      "run",
		Usage:     "read transcripts, replay strategies, write tables and summary",
		ArgsUsage: "PATH...",
		Description: "Reads every transcript under the given files and directories (.jsonl, .json,\n" +
			".traj, .zip, optionally .gz/.zst; label files are skipped) with -j workers and\n" +
			"writes the tables (CSV and Parquet) and summary.json to --out. Output is\n" +
			"byte-identical whatever -j is.",
		Flags: slices.Concat([]cli.Flag{
			&cli.IntFlag{Name: "jobs", Aliases: []string{"j"}, Value: runtime.NumCPU(), Usage: "files read in parallel"},
			&cli.StringFlag{Name: "out", Aliases: []string{"o"}, Value: "results/latest", Usage: "output directory"},
			inputFormatFlag(),
			&cli.StringFlag{Name: "format", Value: defaultFormats, Usage: "outputs, comma-separated: " + formatsHelp},
			&cli.StringFlag{Name: "report-transcript", Usage: "transcript (id or path) whose context report.html draws (default: the one with the most calls)"},
			&cli.BoolFlag{Name: "strict", Usage: "exit 1 when any input problem was found"},
			&cli.BoolFlag{Name: "quiet", Aliases: []string{"q"}, Usage: "print nothing on success"},
			&cli.BoolFlag{Name: "no-progress", Usage: "never show the progress bar"},
			&cli.StringFlag{Name: "rulers", Value: strings.Join(tokens.DefaultNames(), ","), Usage: "rulers measured in the calls table (" + strings.Join(tokens.Names(), ", ") + ", default, all)"},
		}, limitFlags(), metricFlags(), []cli.Flag{
			&cli.StringFlag{Name: "overhead", Value: "segments", Usage: "how the calls table fixes the overhead: first (the first call) or segments (again after each compaction or model change)"},
			rulesFlag, labelsFlag, evidenceFlag,
		}, strategyFlags(), []cli.Flag{
			&cli.StringSliceFlag{Name: "set", Usage: "override a strategy parameter, `STRATEGY.PARAM=VALUE` (repeatable), e.g. mask.keep=20"},
		}),
		Action: func(c *cli.Context) error {
			opts := runOptions{
				Paths: c.Args().Slice(), Jobs: c.Int("jobs"), Out: c.String("out"),
				InputFormat: c.String("input-format"), Strict: c.Bool("strict"), Quiet: c.Bool("quiet"),
				Progress: !c.Bool("no-progress"), ReportTranscript: c.String("report-transcript"),
				Rules: c.StringSlice("rules"), Labels: c.StringSlice("labels"), Evidence: c.String("evidence"),
			}
			var err error
			if opts.Limits, err = readLimits(c); err != nil {
				return err
			}
			if opts.Formats, err = parseFormats(c.String("format")); err != nil {
				return err
			}
			if err := rulerFlags(&opts.Config, c.String("rulers"), c.String("ruler"), c.String("calibration"), c.String("overhead")); err != nil {
				return err
			}
			if opts.Config.Compaction, err = compactionFlags(c); err != nil {
				return err
			}
			return runCommand(c.Context, opts, c.App.Writer, c.App.ErrWriter)
		},
	}
}

// runOptions are the inputs of the run command.
type runOptions struct {
	Paths       []string
	Jobs        int
	Out         string
	InputFormat string
	// Limits bound what one input file may cost (--max-line ...).
	Limits   loader.Limits
	Formats  outputFormats
	Strict   bool
	Quiet    bool
	Progress bool
	Config   analysis.Config
	// Rules, Labels and Evidence are --rules, --labels and --evidence.
	Rules    []string
	Labels   []string
	Evidence string
	// NoAnchors leaves Config.Anchors nil (tests and benchmarks).
	NoAnchors bool
	// ReportTranscript is --report-transcript.
	ReportTranscript string
}

// outputFormats are the outputs chosen by name with --format.
type outputFormats struct {
	Table bool
	Files report.Formats
}

// defaultFormats is --format's default: every output.
const defaultFormats = "table,csv,parquet,json,md,html"

const formatsHelp = "table (terminal summary), csv and parquet (every table), json (summary.json), " +
	"md (report.md), html (report.html), or all"

func parseFormats(s string) (outputFormats, error) {
	var f outputFormats
	for _, name := range strings.Split(s, ",") {
		switch strings.TrimSpace(name) {
		case "table":
			f.Table = true
		case "csv":
			f.Files.CSV = true
		case "parquet":
			f.Files.Parquet = true
		case "json":
			f.Files.JSON = true
		case "md", "markdown":
			f.Files.Markdown = true
		case "html":
			f.Files.HTML = true
		case "all":
			f.Table = true
			f.Files = report.Formats{CSV: true, Parquet: true, JSON: true, Markdown: true, HTML: true}
		case "":
		default:
			return f, usageErr("--format: unknown format %q (known: table, csv, parquet, json, md, html, all)", name)
		}
	}
	return f, nil
}

// configHash identifies the analysis configuration in summary.json.
func configHash(cfg *analysis.Config) string {
	data, _ := json.Marshal(cfg)
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:8])
}

// runCommand reads, analyses and writes; it is the whole run command.
func runCommand(ctx context.Context, opts runOptions, stdout, stderr io.Writer) error {
	if len(opts.Paths) == 0 {
		return usageErr("run: no input paths (try: compactbench run corpora/)")
	}
	if err := checkJobs(opts.Jobs); err != nil {
		return err
	}
	if err := report.CheckOutputDir(opts.Out); err != nil {
		return usageErr("-o: %v", err)
	}
	if err := checkInputFormat(opts.InputFormat); err != nil {
		return err
	}
	start := time.Now()
	inputs, err := loader.Walk(opts.Paths, opts.Out)
	if err != nil {
		return usageErr("%v", err)
	}
	files := inputs.Files
	if len(files) == 0 {
		return usageErr("no transcript files under %s", strings.Join(opts.Paths, ", "))
	}
	overhead, err := opts.Config.Anchoring()
	if err != nil {
		return usageErr("%v", err)
	}
	var labelProblems []anchors.LabelProblem
	if opts.Config.Anchors == nil && !opts.NoAnchors {
		if opts.Config.Anchors, labelProblems, err = anchorConfig(opts.Rules, opts.Labels, opts.Evidence, inputs.Labels); err != nil {
			return err
		}
	}
	if err := checkStrategyRuleSets(&opts.Config); err != nil {
		return err
	}
	w, err := report.NewWriter(report.Options{Dir: opts.Out, Formats: opts.Formats.Files, Meta: report.Meta{
		Tool: "compactbench", Version: version, ConfigHash: configHash(&opts.Config), Inputs: opts.Paths,
		Overhead: overhead.String(),
	}, Settings: reportSettings(&opts.Config), ReportTranscript: opts.ReportTranscript})
	if err != nil {
		return err
	}
	if len(labelProblems) > 0 {
		p := labelProblems[0]
		fmt.Fprintf(stderr, "compactbench: warning: %d label line(s) cannot be used and are problem rows; first: %s:%d: %s\n", len(labelProblems), p.File, p.Line, p.Reason)
		rows := make([]analysis.ProblemRow, len(labelProblems))
		for i, p := range labelProblems {
			rows[i] = analysis.ProblemRow{Path: p.File, TranscriptID: "(labels)", Line: int64(p.Line), Reason: p.Reason}
		}
		if err := w.AddProblems(rows); err != nil {
			w.Abort()
			return err
		}
	}
	closed := false
	defer func() {
		if !closed { // a panic or an early return: drop the partial set
			w.Abort()
		}
	}()

	var total int64
	for _, f := range files {
		total += f.Size
	}
	bar := newProgress(stderr, total, opts.Progress && !opts.Quiet)
	cfg := opts.Config
	errw := &lockedWriter{w: stderr}
	work := func(ctx context.Context, i int) ([]*analysis.Result, error) {
		if f := files[i]; f.Problem != "" {
			return []*analysis.Result{analysis.Analyze(loader.ProblemTranscript(f.Path, f.Problem), &cfg)}, nil
		}
		return analyzeFile(ctx, files[i].Path, loader.Options{Format: opts.InputFormat, Limits: opts.Limits}, &cfg, errw)
	}
	var ids, paths []string // for labels that name no transcript
	emit := func(i int, rs []*analysis.Result) error {
		hook("emit", files[i].Path)
		if bar != nil {
			bar.Add64(files[i].Size)
		}
		for _, r := range rs {
			ids, paths = append(ids, r.Transcript.TranscriptID), append(paths, r.Transcript.Path)
		}
		return w.AddFile(rs)
	}
	if err := loader.Ordered(ctx, len(files), opts.Jobs, work, emit); err != nil {
		return err
	}
	if bar != nil {
		bar.Finish()
	}
	closed = true
	sum, err := w.Close()
	if err != nil {
		return err
	}
	elapsed := time.Since(start)
	if !opts.Quiet {
		if opts.Formats.Table {
			if err := report.CorpusTable(stdout, sum); err != nil {
				return err
			}
			if err := report.RulerTable(stdout, sum); err != nil {
				return err
			}
			if err := report.StrategyTable(stdout, sum); err != nil {
				return err
			}
			if err := report.AnchorsTable(stdout, sum); err != nil {
				return err
			}
		}
		if opts.Config.Anchors != nil {
			warnUnmatchedLabels(stderr, opts.Config.Anchors.Labels, ids, paths)
		}
		if n, first := sum.Overfull(); n > 0 {
			fmt.Fprintf(stderr, "note: %d transcripts have a fixed overhead (instructions, tools) at or above the window, so their replays compact on every call (runs.overhead; first: %s)\n",
				n, first)
		}
		fmt.Fprintf(stderr, "read %d files (%.1f MB) in %v: %d transcripts, %d problems; outputs in %s\n",
			len(files), float64(total)/1e6, elapsed.Round(time.Millisecond), sum.Corpus.Transcripts, sum.Corpus.Problems, opts.Out)
	}
	if opts.Strict && sum.Corpus.Problems > 0 {
		return failErr("--strict: %d input problems (see %s/problems.csv)", sum.Corpus.Problems, opts.Out)
	}
	return nil
}

// testHook, when set by a test, is called at points of a run ("file" when
// a worker starts on a file, "analyze" before a transcript is analysed,
// "emit" when a file's results are written) so that
// tests can make them fail. It is read by workers, hence atomic.
var testHook atomic.Pointer[func(stage, path string)]

// hook calls testHook when a test set it.
func hook(stage, path string) {
	if h := testHook.Load(); h != nil {
		(*h)(stage, path)
	}
}

// analyzeFile reads one input file and analyses every transcript in it.
// A panic while doing so is a bug met on this file: the file's results are
// replaced by one problem row saying so, a short note goes to stderr, and
// the run goes on.
func analyzeFile(ctx context.Context, path string, lo loader.Options, cfg *analysis.Config, stderr io.Writer) (out []*analysis.Result, err error) {
	defer func() {
		if p := recover(); p != nil {
			fmt.Fprintf(stderr, "compactbench: internal error on %s: %v; the file is reported as a problem. This is a bug: please report it\n", path, p)
			t := &transcript.Transcript{ID: path, Path: path, Format: "unknown", Kind: transcript.KindSession,
				Problems: []transcript.Problem{{Reason: fmt.Sprintf("internal error while reading this file (a bug, please report it): %v", p)}}}
			out, err = []*analysis.Result{analysis.Analyze(t, cfg)}, nil
		}
	}()
	hook("file", path)
	lo.Context = ctx
	c := *cfg
	c.Context = ctx
	err = loader.ReadFile(path, lo, func(t *transcript.Transcript) error {
		if err := ctx.Err(); err != nil {
			return err
		}
		hook("analyze", path)
		out = append(out, analysis.Analyze(t, &c))
		return ctx.Err()
	})
	return out, err
}

// checkJobs validates -j.
func checkJobs(jobs int) error {
	if jobs < 1 {
		return usageErr("--jobs: want at least 1, got %d", jobs)
	}
	return nil
}

// checkStrategyRuleSets rejects a strategy parameter naming a rule set that
// is neither built in nor given with --rules.
func checkStrategyRuleSets(cfg *analysis.Config) error {
	c := cfg.Compaction
	if c == nil {
		return nil
	}
	known := map[string]bool{}
	if cfg.Anchors != nil {
		for _, s := range cfg.Anchors.Sets {
			known[s.Name] = true
		}
	}
	for _, s := range compaction.Specs() {
		p, ok := c.Params[s.ID]
		if !ok {
			continue
		}
		f := reflect.ValueOf(p).Elem().FieldByName("Rules")
		if !f.IsValid() || f.Kind() != reflect.String || known[f.String()] {
			continue
		}
		if _, err := anchors.Builtin(f.String()); err != nil {
			return usageErr("--set %s.rules: %v", s.ID, err)
		}
	}
	return nil
}

// newProgress returns a byte-counting progress bar on stderr, or nil when
// stderr is not a terminal or progress is off.
func newProgress(stderr io.Writer, total int64, enabled bool) *progressbar.ProgressBar {
	f, ok := stderr.(*os.File)
	if !enabled || !ok || !term.IsTerminal(int(f.Fd())) {
		return nil
	}
	return progressbar.NewOptions64(total,
		progressbar.OptionSetWriter(stderr),
		progressbar.OptionSetDescription("reading"),
		progressbar.OptionShowBytes(true),
		progressbar.OptionThrottle(100*time.Millisecond),
		progressbar.OptionClearOnFinish(),
	)
}

// rulerFlags validates the ruler flags into cfg and loads a calibration
// file.
func rulerFlags(cfg *analysis.Config, rulers, metric, calibration, overhead string) error {
	names, err := tokens.ParseNames(rulers)
	if err != nil {
		return usageErr("--rulers: %v", err)
	}
	if _, err := tokens.ByName(metric); err != nil {
		return usageErr("--ruler: %v", err)
	}
	if _, ok := tokens.ParseAnchoring(overhead); !ok {
		return usageErr("--overhead: want first or segments, got %q", overhead)
	}
	cfg.RulerNames, cfg.Ruler, cfg.Overhead = names, metric, overhead
	if calibration != "" {
		data, err := os.ReadFile(calibration)
		if err != nil {
			return usageErr("--calibration: %v", err)
		}
		if cfg.Calibration, err = tokens.ParseFactors(data); err != nil {
			return usageErr("--calibration %s: %v", calibration, err)
		}
	}
	return nil
}

// compactionFlags builds the strategies configuration: the --config file
// (or the defaults), then --mode, --window, --strategies and each --set.
func compactionFlags(c *cli.Context) (*compaction.Config, error) {
	cfg, err := compactionBase(c)
	if err != nil {
		return nil, err
	}
	for _, kv := range c.StringSlice("set") {
		k, v, ok := strings.Cut(kv, "=")
		if !ok {
			return nil, usageErr("--set %s: want STRATEGY.PARAM=VALUE", kv)
		}
		if err := cfg.Set(strings.TrimSpace(k), strings.TrimSpace(v)); err != nil {
			return nil, usageErr("--set: %v", err)
		}
	}
	return cfg, nil
}

// compactionBase is compactionFlags without --set (tune sweeps it).
func compactionBase(c *cli.Context) (*compaction.Config, error) {
	cfg, err := loadCompactionConfig(c.String("config"))
	if err != nil {
		return nil, err
	}
	if c.IsSet("mode") || c.String("config") == "" {
		if err := cfg.Set("mode", c.String("mode")); err != nil {
			return nil, usageErr("--mode: %v", err)
		}
	}
	if c.IsSet("window") {
		if c.Int("window") < 0 {
			return nil, usageErr("--window: want a positive number of tokens")
		}
		cfg.Window = c.Int("window")
	}
	if s := c.String("strategies"); s != "" {
		cfg.Strategies = nil
		for _, id := range strings.Split(s, ",") {
			id = strings.TrimSpace(id)
			if _, err := compaction.SpecByID(id); err != nil {
				return nil, usageErr("--strategies: %v", err)
			}
			cfg.Strategies = append(cfg.Strategies, id)
		}
	}
	return cfg, nil
}
