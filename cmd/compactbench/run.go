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
	"strconv"
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
			&cli.StringFlag{Name: "cache", Usage: "keep each file's results in `DIR`, keyed by content, configuration and build; a re-run analyses only new or changed files (not with a model summarizer)"},
			&cli.StringFlag{Name: "shard", Usage: "process shard `K/N` of the inputs (1 ≤ K ≤ N), chosen by a hash of each file's path relative to its argument (not with a model summarizer)"},
			&cli.BoolFlag{Name: "wide", Usage: "terminal: every table and every figure (default: the verdict and the deciding figures, within 100 columns)"},
			&cli.StringFlag{Name: "rulers", Value: strings.Join(tokens.DefaultNames(), ","), Usage: "rulers measured in the calls table (" + strings.Join(tokens.Names(), ", ") + ", default, all)"},
		}, limitFlags(), metricFlags(), []cli.Flag{
			&cli.StringFlag{Name: "overhead", Value: "segments", Usage: "how the calls table fixes the overhead: first (the first call) or segments (again after each compaction or model change)"},
			rulesFlag, labelsFlag, evidenceFlag,
		}, strategyFlags(), []cli.Flag{
			&cli.StringSliceFlag{Name: "set", Usage: "override a strategy parameter, `STRATEGY.PARAM=VALUE` (repeatable), e.g. mask.keep=20"},
		}, summarizerFlags()),
		Action: func(c *cli.Context) error {
			opts := runOptions{
				Paths: c.Args().Slice(), Jobs: c.Int("jobs"), Out: c.String("out"),
				InputFormat: c.String("input-format"), Strict: c.Bool("strict"), Quiet: c.Bool("quiet"),
				Progress: !c.Bool("no-progress"), Wide: c.Bool("wide"), ReportTranscript: c.String("report-transcript"),
				Rules: c.StringSlice("rules"), Labels: c.StringSlice("labels"), Evidence: c.String("evidence"),
				Cache: c.String("cache"),
			}
			var err error
			if opts.Shard, err = parseShard(c.String("shard")); err != nil {
				return err
			}
			if opts.Limits, err = readLimits(c); err != nil {
				return err
			}
			if opts.Formats, err = parseFormats(c.String("format")); err != nil {
				return err
			}
			if err := rulerFlags(&opts.Config, c.String("rulers"), c.String("ruler"), c.String("calibration"), c.String("overhead")); err != nil {
				return err
			}
			if opts.Config.Models, err = loadModels(c.String("models")); err != nil {
				return err
			}
			if opts.Config.Compaction, err = compactionFlags(c); err != nil {
				return err
			}
			if opts.LLM, err = summarizerFromFlags(c, opts.Config.Compaction, opts.Config.Models); err != nil {
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
	// Limits bound what one input file may cost (--max-line ...).
	Limits   loader.Limits
	Formats  outputFormats
	Strict   bool
	Quiet    bool
	Progress bool
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
	// Cache is --cache: a directory of per-file results ("" for none).
	Cache string
	// Shard is --shard (the zero Shard is every file).
	Shard shard
	// LLM is the model summarizer (nil: extractive summaries).
	LLM *llmSetup
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
	nall := len(files)
	picked := opts.Shard.pick(opts.Paths, files) // indices into the whole run's files
	if opts.Shard.N > 0 {
		part := make([]loader.File, len(picked))
		for i, k := range picked {
			part[i] = files[k]
		}
		files = part
	}
	overhead, err := opts.Config.Anchoring()
	if err != nil {
		return usageErr("%v", err)
	}
	if err := opts.LLM.start(ctx, &opts.Config); err != nil {
		return err
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
	if opts.LLM != nil && (opts.Cache != "" || opts.Shard.N > 0) {
		return usageErr("--cache and --shard do not work with a model summarizer: its summaries depend on the model's answers, not only on the file, configuration and build a result is keyed by, and its request, over-budget and miss counts are counted over the whole run, so a cached or merged run could not write the unsharded run's figures (run it unsharded; --llm-cache still saves the requests)")
	}
	if len(opts.Thresholds) > 0 {
		if opts.Config.Anchors == nil {
			return usageErr("--set anchors.*: no rule sets in this run (--rules none)")
		}
		if opts.Config.Anchors, err = withThresholds(opts.Config.Anchors, opts.Thresholds); err != nil {
			return err
		}
	}
	meta := report.Meta{
		Tool: "compactbench", Version: version, ConfigHash: configHash(&opts.Config), Inputs: opts.Paths,
		Overhead: overhead.String(), Models: opts.Config.Models,
	}
	meta.RunID = runID(&meta)
	settings := reportSettings(&opts.Config)
	w, err := report.NewWriter(report.Options{Dir: opts.Out, Formats: opts.Formats.Files, Meta: meta,
		Settings: settings, ReportTranscript: opts.ReportTranscript, Summaries: opts.LLM != nil})
	if err != nil {
		return err
	}
	var shardOut *shardWriter // run --shard: the results for merge, in the output set
	closed := false
	defer func() {
		if !closed { // a panic or an early return: drop the partial set
			w.Abort()
			if shardOut != nil {
				shardOut.abort()
			}
		}
	}()
	if opts.LLM != nil {
		w.SetSummarizer(opts.LLM.Name, opts.LLM.Options.Model)
	}
	if len(labelProblems) > 0 {
		fmt.Fprintf(stderr, "compactbench: warning: %d label line(s) cannot be used and are problem rows; first: %s\n", len(labelProblems), labelProblems[0])
		if opts.Shard.ownsRunRows() {
			if err := w.AddProblems(labelProblemRows(labelProblems)); err != nil {
				return err
			}
		}
	}
	if opts.Shard.N > 0 {
		build, err := buildID()
		if err != nil {
			return err
		}
		h := &shardHeader{Format: shardFormat, K: opts.Shard.K, N: opts.Shard.N, Files: nall, Build: build, Meta: meta,
			Settings: settings, ReportTranscript: opts.ReportTranscript, RuleSets: shardRuleSets(&opts.Config),
			LabelProblems: labelProblemRows(labelProblems)}
		if shardOut, err = newShardWriter(w.Dir(), h); err != nil {
			return err
		}
	}
	var total int64
	for _, f := range files {
		total += f.Size
	}
	bar := newProgress(stderr, total, opts.Progress && !opts.Quiet)
	cfg := opts.Config
	var cache *resultCache
	if opts.Cache != "" {
		if cache, err = openResultCache(opts.Cache, &cfg, opts.InputFormat, opts.Limits); err != nil {
			return err
		}
	}
	errw := &lockedWriter{w: stderr}
	work := func(ctx context.Context, i int) ([]*analysis.Result, error) {
		if f := files[i]; f.Problem != "" {
			return []*analysis.Result{analysis.Analyze(loader.ProblemTranscript(f.Path, f.Problem), &cfg)}, nil
		}
		analyze := func() ([]*analysis.Result, error) {
			return analyzeFile(ctx, files[i].Path, loader.Options{Format: opts.InputFormat, Limits: opts.Limits}, &cfg, errw)
		}
		if cache != nil {
			return cache.analyze(analyze, files[i].Path)
		}
		return analyze()
	}
	var ids, paths []string // for labels that name no transcript
	emit := func(i int, rs []*analysis.Result) error {
		hook("emit", files[i].Path)
		if bar != nil {
			if opts.LLM != nil {
				bar.Describe(opts.LLM.describe())
			}
			bar.Add64(files[i].Size)
		}
		for _, r := range rs {
			ids, paths = append(ids, r.Transcript.TranscriptID), append(paths, r.Transcript.Path)
		}
		if shardOut != nil {
			if err := shardOut.add(picked[i], files[i].Path, rs); err != nil {
				return err
			}
		}
		return w.AddFile(rs)
	}
	if err := loader.Ordered(ctx, len(files), opts.Jobs, work, emit); err != nil {
		return err
	}
	if bar != nil {
		bar.Finish()
	}
	cache.warnCorrupt(stderr)
	if opts.LLM != nil {
		st := opts.LLM.Summarizer.Stats()
		w.SetSummarizerCounts(st.Requests, st.OverBudget, st.Misses)
	}
	if shardOut != nil {
		if err := shardOut.finish(); err != nil {
			return err
		}
	}
	closed = true
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
		if opts.LLM != nil {
			st := opts.LLM.Summarizer.Stats()
			fmt.Fprintf(stderr, "summaries by %s (%s): %d from the model, %d from the cache, %d fell back to extractive (%d failed, %d over budget, %d not cached); %d requests, %d+%d tokens, $%.4f\n",
				opts.LLM.Name, opts.LLM.Options.Model, st.LLM, st.Cached, st.Failed+st.OverBudget+st.Misses, st.Failed, st.OverBudget, st.Misses,
				st.Requests, st.InputTokens, st.OutputTokens, st.USD)
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
		if cache != nil {
			fmt.Fprintf(stderr, "cache %s: %d files reused, %d analysed\n", opts.Cache, cache.Hits.Load(), cache.Misses.Load())
		}
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
