package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/schollz/progressbar/v3"
	"github.com/urfave/cli/v2"
	"golang.org/x/term"

	"github.com/compactbench/compactbench/internal/analysis"
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
			&cli.BoolFlag{Name: "wide", Usage: "terminal: every table and every figure (default: the verdict and the deciding figures, within 100 columns)"},
			&cli.StringFlag{Name: "rulers", Value: strings.Join(tokens.DefaultNames(), ","), Usage: "rulers measured in the calls table (" + strings.Join(tokens.Names(), ", ") + ", default, all)"},
		}, metricFlags(), []cli.Flag{
			&cli.StringFlag{Name: "overhead", Value: "segments", Usage: "how the calls table fixes the overhead: first (the first call) or segments (again after each compaction or model change)"},
			rulesFlag, labelsFlag, evidenceFlag,
		}, strategyFlags(), []cli.Flag{
			&cli.StringSliceFlag{Name: "set", Usage: "override a strategy parameter, `STRATEGY.PARAM=VALUE` (repeatable), e.g. mask.keep=20"},
		}),
		Action: func(c *cli.Context) error {
			opts := runOptions{
				Paths: c.Args().Slice(), Jobs: c.Int("jobs"), Out: c.String("out"),
				InputFormat: c.String("input-format"), Strict: c.Bool("strict"), Quiet: c.Bool("quiet"),
				Progress: !c.Bool("no-progress"), Wide: c.Bool("wide"), ReportTranscript: c.String("report-transcript"),
				Rules: c.StringSlice("rules"), Labels: c.StringSlice("labels"), Evidence: c.String("evidence"),
			}
			var err error
			if opts.Formats, err = parseFormats(c.String("format")); err != nil {
				return err
			}
			if err := rulerFlags(&opts.Config, c.String("rulers"), c.String("ruler"), c.String("calibration"), c.String("overhead")); err != nil {
				return err
			}
			if opts.Config.Compaction, err = compactionFlags(c); err != nil {
				return err
			}
			if opts.Thresholds, err = anchorThresholds(c.StringSlice("set")); err != nil {
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
	Formats     outputFormats
	Strict      bool
	Quiet       bool
	Progress    bool
	// Wide is --wide: every terminal table and figure.
	Wide   bool
	Config analysis.Config
	// Rules, Labels and Evidence are --rules, --labels and --evidence.
	Rules    []string
	Labels   []string
	Evidence string
	// NoAnchors leaves Config.Anchors nil (tests and benchmarks).
	NoAnchors bool
	// Thresholds are --set anchors.threshold / anchors.SET.threshold:
	// rule-set name ("" for every set) → confidence threshold.
	Thresholds map[string]float64
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

// runID identifies a run by what determines its outputs: tool, version,
// configuration and inputs (no clock, so identical runs share it).
func runID(m *report.Meta) string {
	h := sha256.New()
	fmt.Fprintf(h, "%s\x00%s\x00%s\x00%s", m.Tool, m.Version, m.ConfigHash, strings.Join(m.Inputs, "\x00"))
	return hex.EncodeToString(h.Sum(nil)[:8])
}

// runCommand reads, analyses and writes; it is the whole run command.
func runCommand(ctx context.Context, opts runOptions, stdout, stderr io.Writer) error {
	if len(opts.Paths) == 0 {
		return usageErr("run: no input paths (try: compactbench run corpora/)")
	}
	if err := checkInputFormat(opts.InputFormat); err != nil {
		return err
	}
	start := time.Now()
	inputs, err := loader.Walk(opts.Paths)
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
	if opts.Config.Anchors == nil && !opts.NoAnchors {
		if opts.Config.Anchors, err = anchorConfig(opts.Rules, opts.Labels, opts.Evidence, inputs.Labels); err != nil {
			return err
		}
	}
	if len(opts.Thresholds) > 0 {
		if opts.Config.Anchors == nil {
			return usageErr("--set anchors.*: no rule sets in this run (--rules none)")
		}
		if opts.Config.Anchors, err = withThresholds(opts.Config.Anchors, opts.Thresholds); err != nil {
			return err
		}
	}
	meta := report.Meta{Tool: "compactbench", Version: version, ConfigHash: configHash(&opts.Config), Inputs: opts.Paths,
		Overhead: overhead.String()}
	meta.RunID = runID(&meta)
	w, err := report.NewWriter(report.Options{Dir: opts.Out, Formats: opts.Formats.Files, Meta: meta, Settings: reportSettings(&opts.Config), ReportTranscript: opts.ReportTranscript})
	if err != nil {
		return err
	}

	var total int64
	for _, f := range files {
		total += f.Size
	}
	bar := newProgress(stderr, total, opts.Progress && !opts.Quiet)
	cfg := opts.Config
	work := func(ctx context.Context, i int) ([]*analysis.Result, error) {
		return analyzeFile(ctx, files[i].Path, opts.InputFormat, &cfg)
	}
	var ids, paths []string // for labels that name no transcript
	emit := func(i int, rs []*analysis.Result) error {
		if bar != nil {
			bar.Add64(files[i].Size)
		}
		for _, r := range rs {
			ids, paths = append(ids, r.Transcript.TranscriptID), append(paths, r.Transcript.Path)
		}
		return w.AddFile(rs)
	}
	if err := loader.Ordered(ctx, len(files), opts.Jobs, work, emit); err != nil {
		w.Abort()
		return err
	}
	if bar != nil {
		bar.Finish()
	}
	sum, err := w.Close()
	if err != nil {
		return err
	}
	elapsed := time.Since(start)
	if !opts.Quiet {
		if opts.Formats.Table {
			if err := terminalTables(stdout, sum, opts.Wide); err != nil {
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

// analyzeFile reads one input file and analyses every transcript in it.
func analyzeFile(ctx context.Context, path, inputFormat string, cfg *analysis.Config) ([]*analysis.Result, error) {
	var out []*analysis.Result
	err := loader.ReadFile(path, loader.Options{Format: inputFormat}, func(t *transcript.Transcript) error {
		out = append(out, analysis.Analyze(t, cfg))
		return ctx.Err()
	})
	return out, err
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
		if _, ok := thresholdKey(strings.TrimSpace(k)); ok {
			continue // an anchor threshold (anchorThresholds)
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

// terminalTables prints the run's results: the verdict first, then the
// strategies' deciding figures and a corpus line, within 100 columns; wide
// adds every figure and the corpus, ruler and rule-set tables.
func terminalTables(w io.Writer, sum *report.Summary, wide bool) error {
	if err := report.VerdictText(w, sum); err != nil {
		return err
	}
	fmt.Fprintln(w)
	if err := report.StrategyTable(w, sum, wide); err != nil {
		return err
	}
	if line := report.RereadLine(sum); line != "" {
		fmt.Fprintln(w, line)
	}
	if !wide {
		_, err := fmt.Fprintln(w, report.CorpusLine(sum))
		return err
	}
	for _, table := range []func(io.Writer, *report.Summary) error{report.CorpusTable, report.RulerTable, report.AnchorsTable} {
		if err := table(w, sum); err != nil {
			return err
		}
	}
	return nil
}

// anchorThresholds reads the --set values that set rule-set thresholds
// (anchors.threshold, anchors.SET.threshold), as tune takes them; other
// anchors.* keys are usage errors.
func anchorThresholds(sets []string) (map[string]float64, error) {
	out := map[string]float64{}
	for _, kv := range sets {
		k, v, _ := strings.Cut(kv, "=")
		k, v = strings.TrimSpace(k), strings.TrimSpace(v)
		set, ok := thresholdKey(k)
		if !ok {
			if strings.HasPrefix(k, "anchors.") {
				return nil, usageErr("--set %s: the anchor keys are anchors.threshold and anchors.SET.threshold", k)
			}
			continue
		}
		t, err := strconv.ParseFloat(v, 64)
		if err != nil {
			return nil, usageErr("--set %s=%s: not a number", k, v)
		}
		out[set] = t
	}
	return out, nil
}
