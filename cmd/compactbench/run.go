package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/schollz/progressbar/v3"
	"github.com/urfave/cli/v2"
	"golang.org/x/term"

	"github.com/compactbench/compactbench/internal/analysis"
	"github.com/compactbench/compactbench/internal/anchors"
	"github.com/compactbench/compactbench/internal/loader"
	"github.com/compactbench/compactbench/internal/plan"
	"github.com/compactbench/compactbench/internal/report"
	"github.com/compactbench/compactbench/internal/tempfile"
	"github.com/compactbench/compactbench/internal/tokens"
	"github.com/compactbench/compactbench/internal/transcript"
)

func newRunCommand() *cli.Command {
	d := plan.Defaults()
	return &cli.Command{
		Name:      "run",
		Usage:     "read transcripts, replay strategies, write tables and summary",
		ArgsUsage: "PATH...",
		Description: "Reads every transcript under the given files and directories (.jsonl, .json,\n" +
			".traj, .zip, optionally .gz/.zst; label files are skipped) with -j workers and\n" +
			"writes the tables (CSV and Parquet) and summary.json to --out. Output is\n" +
			"byte-identical whatever -j is.",
		Flags: slices.Concat([]cli.Flag{
			&cli.IntFlag{Name: "jobs", Aliases: []string{"j"}, Value: d.Jobs, Usage: "files read in parallel"},
			&cli.StringFlag{Name: "out", Aliases: []string{"o"}, Value: d.Out, Usage: "output directory"},
			inputFormatFlag(),
			&cli.StringFlag{Name: "format", Value: d.Format, Usage: "outputs, comma-separated: " + plan.FormatsHelp},
			&cli.StringFlag{Name: "report-transcript", Usage: "transcript (id or path) whose context report.html draws (default: the one with the most calls)"},
			&cli.BoolFlag{Name: "strict", Usage: "exit 1 when any input problem was found"},
			&cli.BoolFlag{Name: "quiet", Aliases: []string{"q"}, Usage: "print nothing on success"},
			&cli.BoolFlag{Name: "no-progress", Usage: "never show the progress bar"},
			&cli.StringFlag{Name: "cache", Usage: "keep each file's results in `DIR`, keyed by content, configuration and build; a re-run analyses only new or changed files (not with a model summarizer)"},
			&cli.StringFlag{Name: "shard", Usage: "process shard `K/N` of the inputs (1 ≤ K ≤ N), chosen by a hash of each file's path relative to its argument (not with a model summarizer)"},
			&cli.BoolFlag{Name: "wide", Usage: "terminal: every table and every figure (default: the verdict and the deciding figures, within 100 columns)"},
			&cli.StringFlag{Name: "rulers", Value: d.Rulers, Usage: "rulers measured in the calls table (" + strings.Join(tokens.Names(), ", ") + ", default, all)"},
		}, limitFlags(), metricFlags(), []cli.Flag{
			&cli.StringFlag{Name: "overhead", Value: d.Overhead, Usage: "how the calls table fixes the overhead: first (the first call) or segments (again after each compaction or model change)"},
			rulesFlag, labelsFlag, evidenceFlag,
		}, strategyFlags(), []cli.Flag{
			&cli.StringSliceFlag{Name: "set", Usage: "override a strategy parameter, `STRATEGY.PARAM=VALUE` (repeatable), e.g. mask.keep=20"},
		}, summarizerFlags()),
		Action: func(c *cli.Context) error {
			opts, err := resolveRun(c)
			if err != nil {
				return err
			}
			return runCommand(c.Context, opts, c.App.Writer, c.App.ErrWriter)
		},
	}
}

// runInput reads the run command's flags as given.
func runInput(c *cli.Context) plan.Input {
	return plan.Input{
		Paths: c.Args().Slice(), Jobs: c.Int("jobs"), Out: c.String("out"), InputFormat: c.String("input-format"),
		Format: c.String("format"), ReportTranscript: c.String("report-transcript"), Strict: c.Bool("strict"),
		Quiet: c.Bool("quiet"), Progress: !c.Bool("no-progress"), Wide: c.Bool("wide"), Cache: c.String("cache"),
		Limits: limitsInput(c), Metric: metricInput(c), Rulers: c.String("rulers"), Overhead: c.String("overhead"),
		Anchors: anchorsInput(c), Strategy: strategyInput(c), Set: c.StringSlice("set"),
	}
}

// resolveRun is the run's one resolution step: every flag is read and
// validated here (plan.ForRun, then the shard and the summarizer), so a bad
// value exits 2 before any output is written.
func resolveRun(c *cli.Context) (runOptions, error) {
	sh, err := parseShard(c.String("shard"))
	if err != nil {
		return runOptions{}, err
	}
	p, err := plan.ForRun(runInput(c))
	if err != nil {
		return runOptions{}, err
	}
	opts := runOptions{Run: p, Shard: sh}
	if opts.LLM, err = summarizerFromFlags(c, p.Config.Compaction, p.Config.Models); err != nil {
		return runOptions{}, err
	}
	if opts.LLM != nil && (p.Cache != "" || sh.N > 0) {
		return runOptions{}, usageErr("--cache and --shard do not work with a model summarizer: its summaries depend on the model's answers, not only on the file, configuration and build a result is keyed by, and its request, over-budget and miss counts are counted over the whole run, so a cached or merged run could not write the unsharded run's figures (run it unsharded; --llm-cache still saves the requests)")
	}
	return opts, nil
}

// runOptions are the run command's resolved inputs: the plan, the shard
// and the model summarizer.
type runOptions struct {
	*plan.Run
	// Shard is --shard (the zero Shard is every file).
	Shard shard
	// LLM is the model summarizer (nil: extractive summaries).
	LLM *llmSetup
}

// runCommand reads, analyses and writes; it is the whole run command after
// resolution.
func runCommand(ctx context.Context, opts runOptions, stdout, stderr io.Writer) error {
	start := time.Now()
	if err := opts.LLM.start(ctx, &opts.Config); err != nil {
		return err
	}
	j := newRunJob(opts)
	j.mem = startMemLimit()
	defer j.mem.stop()
	closed := false
	defer func() {
		if !closed { // a panic or an early return: drop the partial set
			j.abort()
		}
	}()
	if err := j.open(stderr); err != nil {
		return err
	}
	if err := j.process(ctx, stderr); err != nil {
		if oerr := j.ready(); oerr != nil { // the first emit stopped the run on it
			return oerr
		}
		return err
	}
	if err := j.ready(); err != nil {
		return err
	}
	if err := j.finish(); err != nil {
		return err
	}
	closed = true
	sum, err := j.w.Close()
	if err != nil {
		return err
	}
	if !opts.Quiet {
		if err := j.printSummary(stdout, stderr, sum, time.Since(start)); err != nil {
			return err
		}
	}
	if opts.Strict && sum.Corpus.Problems > 0 {
		return failErr("--strict: %d input problems (see %s/problems.csv)", sum.Corpus.Problems, opts.Out)
	}
	return nil
}

// runJob is one run in progress: its files (this shard's), the output set
// being written and what the summary lines need.
type runJob struct {
	opts runOptions
	// files are the files this run reads; picked their indices among all
	// the run's files (the shard's part, or every one).
	files  []loader.File
	picked []int
	nall   int
	total  int64 // bytes of files
	w      *report.Writer
	// shardOut is run --shard's results for merge, in the output set.
	shardOut *shardWriter
	cache    *resultCache
	// matches records the labels the transcripts read name, to warn
	// about labels naming none (nil without labels); it holds one flag per
	// label, nothing per transcript.
	matches *anchors.Matches
	// mem is the run's soft memory limit, updated as files are written.
	mem *memLimit
	// opened is closed when the output set is open (w, shardOut), openErr
	// the error opening it met; ready waits for it.
	opened  chan struct{}
	openErr error
	// readied is set once emit waited for the output set.
	readied bool
}

// newRunJob picks the shard's files.
func newRunJob(opts runOptions) *runJob {
	j := &runJob{opts: opts, files: opts.Files, nall: len(opts.Files)}
	j.picked = opts.Shard.pick(opts.Paths, opts.Files)
	if opts.Shard.N > 0 {
		j.files = make([]loader.File, len(j.picked))
		for i, k := range j.picked {
			j.files[i] = opts.Files[k]
		}
	}
	for _, f := range j.files {
		j.total += f.Size
	}
	if a := opts.Config.Anchors; a != nil && a.Labels != nil {
		j.matches = a.Labels.Matches()
	}
	return j
}

// open starts the output set (and the shard file) on a goroutine of its
// own, which the first emit waits for (ready), so that the workers start
// on the first files meanwhile. The result cache, which the workers read,
// is opened first. With a model summarizer the set is opened before any
// work, so that a bad -o stops the run before it pays for a request.
func (j *runJob) open(stderr io.Writer) error {
	opts := j.opts
	warnTempDir(stderr)
	if lp := opts.LabelProblems; len(lp) > 0 {
		fmt.Fprintf(stderr, "compactbench: warning: %d label line(s) cannot be used and are problem rows; first: %s\n", len(lp), lp[0])
	}
	meta, settings := j.describe()
	if opts.Cache != "" {
		cfg := opts.Config
		var err error
		if j.cache, err = openResultCache(opts.Cache, &cfg, opts.InputFormat, opts.Limits); err != nil {
			if serr := j.openSet(meta, settings); serr != nil { // the output set's error comes first
				return serr
			}
			return err
		}
	}
	if opts.LLM != nil { // model requests cost money: fail on the output set before any
		return j.openSet(meta, settings)
	}
	j.opened = make(chan struct{})
	go func() {
		defer close(j.opened)
		j.openErr = j.openSet(meta, settings)
	}()
	return nil
}

// warnTempDir warns when no temporary file can be made: what a run moves
// to disk past its memory bounds (the rulers' per-call errors, per-event
// values, labels) then stays in memory, correct but growing with the
// corpus. It is not a problem row: the outputs do not depend on it.
func warnTempDir(w io.Writer) {
	if err := tempfile.Check(); err != nil {
		fmt.Fprintf(w, "compactbench: warning: no temporary file can be made (%v): per-call errors, per-event values and labels stay in memory past their bounds, so memory grows with the corpus; set TMPDIR to a writable directory\n", err)
	}
}

// ready waits for the output set open started, and returns the error
// opening it met.
func (j *runJob) ready() error {
	if j.opened == nil {
		return nil
	}
	<-j.opened
	return j.openErr
}

// describe is the output set's meta and settings. It reads the
// configuration, so it is called before the workers start (they may set
// what the configuration computes on first use).
func (j *runJob) describe() (report.Meta, []report.Setting) {
	opts := j.opts
	meta := report.Meta{
		Tool: "compactbench", Version: version, ConfigHash: plan.ConfigHash(&opts.Config), Inputs: opts.Paths,
		Overhead: opts.Overhead.String(), Models: opts.Config.Models,
	}
	meta.RunID = plan.RunID(&meta)
	return meta, reportSettings(&opts.Config)
}

// openSet opens the output set: the writer, the label problems' rows and
// the shard file.
func (j *runJob) openSet(meta report.Meta, settings []report.Setting) error {
	opts := j.opts
	hook("open", opts.Out)
	w, err := report.NewWriter(report.Options{Dir: opts.Out, Formats: opts.Formats.Files, Meta: meta,
		Settings: settings, ReportTranscript: opts.ReportTranscript, Summaries: opts.LLM != nil})
	if err != nil {
		return err
	}
	j.w = w
	if opts.LLM != nil {
		j.w.SetSummarizer(opts.LLM.Name, opts.LLM.Options.Model)
	}
	if err := j.addLabelProblems(); err != nil {
		return err
	}
	if opts.Shard.N > 0 {
		if err := j.openShard(meta, settings); err != nil {
			return err
		}
	}
	if j.cache != nil {
		j.w.Summary().SetCalibrationMemo(j.cache)
	}
	return nil
}

// addLabelProblems writes the label lines that cannot be used as problem
// rows (open warned of them).
func (j *runJob) addLabelProblems() error {
	lp := j.opts.LabelProblems
	if len(lp) == 0 {
		return nil
	}
	if !j.opts.Shard.ownsRunRows() { // shard 1 writes them; merge writes them once
		return nil
	}
	return j.w.AddProblems(labelProblemRows(lp))
}

// openShard starts run --shard's shard.jsonl.zst.
func (j *runJob) openShard(meta report.Meta, settings []report.Setting) error {
	build, err := buildID()
	if err != nil {
		return err
	}
	opts := j.opts
	h := &shardHeader{Format: shardFormat, K: opts.Shard.K, N: opts.Shard.N, Files: j.nall, Build: build, Meta: meta,
		Settings: settings, ReportTranscript: opts.ReportTranscript, RuleSets: shardRuleSets(&opts.Config),
		LabelProblems: labelProblemRows(opts.LabelProblems)}
	j.shardOut, err = newShardWriter(j.w.Dir(), h)
	return err
}

// abort drops the partial output set (a failure or an early return).
func (j *runJob) abort() {
	_ = j.ready() // a set that failed to open is dropped as far as it was made
	if j.w != nil {
		j.w.Abort()
	}
	if j.shardOut != nil {
		j.shardOut.abort()
	}
}

// process reads and analyses every file with -j workers and writes the
// results in path order.
func (j *runJob) process(ctx context.Context, stderr io.Writer) error {
	opts := j.opts
	bar := newProgress(stderr, j.total, opts.Progress && !opts.Quiet)
	cfg := opts.Config
	errw := &lockedWriter{w: stderr}
	lo := loader.Options{Format: opts.InputFormat, Limits: opts.Limits}
	work := func(ctx context.Context, i int) ([]*analysis.Result, error) {
		f := j.files[i]
		if f.Problem != "" {
			return []*analysis.Result{analysis.Analyze(loader.ProblemTranscript(f.Path, f.Problem), &cfg)}, nil
		}
		analyze := func() ([]*analysis.Result, error) { return analyzeFile(ctx, f.Path, lo, &cfg, errw) }
		if j.cache != nil {
			return j.cache.analyze(analyze, f.Path)
		}
		return analyze()
	}
	emit := func(i int, rs []*analysis.Result) error {
		hook("emit", j.files[i].Path)
		if bar != nil {
			if opts.LLM != nil {
				bar.Describe(opts.LLM.describe())
			}
			bar.Add64(j.files[i].Size)
		}
		return j.emit(i, rs)
	}
	if err := j.schedule(ctx, work, emit); err != nil {
		return err
	}
	if bar != nil {
		bar.Finish()
	}
	j.cache.warnCorrupt(stderr)
	return nil
}

// schedule runs work over the files and emits their results in path order.
// Large files start early (within the window), so that no worker is left
// idle behind one. With a model budget, though, the order files are analysed
// in decides which events the budget buys summaries for, so the files start
// in path order: at -j 1 the budget is then spent in path order, as the
// README says.
func (j *runJob) schedule(ctx context.Context, work func(context.Context, int) ([]*analysis.Result, error), emit func(int, []*analysis.Result) error) error {
	if l := j.opts.LLM; l != nil && (l.Options.BudgetTokens > 0 || l.Options.BudgetUSD > 0) {
		return loader.Ordered(ctx, len(j.files), j.opts.Jobs, work, emit)
	}
	size := func(i int) int64 { return j.files[i].Size }
	return loader.OrderedBySize(ctx, len(j.files), j.opts.Jobs, size, work, emit)
}

// emit writes file i's results.
func (j *runJob) emit(i int, rs []*analysis.Result) error {
	if !j.readied {
		j.readied = true
		if err := j.ready(); err != nil {
			return err
		}
	}
	j.mem.fileWritten()
	for _, r := range rs {
		j.matches.Add(r.Transcript.TranscriptID, r.Transcript.Path)
	}
	if j.shardOut != nil {
		if err := j.shardOut.add(j.picked[i], j.files[i].Path, rs); err != nil {
			return err
		}
	}
	return j.w.AddFile(rs)
}

// finish records the summarizer's counts and completes the shard file. A
// label that could not be read back fails the run before its outputs are
// kept.
func (j *runJob) finish() error {
	if err := j.matches.Err(); err != nil {
		return err
	}
	if j.opts.LLM != nil {
		st := j.opts.LLM.Summarizer.Stats()
		j.w.SetSummarizerCounts(st.Requests, st.OverBudget, st.Misses)
	}
	if j.shardOut != nil {
		return j.shardOut.finish()
	}
	return nil
}

// printSummary prints the terminal tables and the run's notes.
func (j *runJob) printSummary(stdout, stderr io.Writer, sum *report.Summary, elapsed time.Duration) error {
	opts := j.opts
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
	warnUnmatchedLabels(stderr, j.matches)
	if n, first := sum.Overfull(); n > 0 {
		fmt.Fprintf(stderr, "note: %d transcripts have a fixed overhead (instructions, tools) at or above the window, so their replays compact on every call (runs.overhead; first: %s)\n",
			n, first)
	}
	fmt.Fprintf(stderr, "read %d files (%.1f MB) in %v: %d transcripts, %d problems; outputs in %s\n",
		len(j.files), float64(j.total)/1e6, elapsed.Round(time.Millisecond), sum.Corpus.Transcripts, sum.Corpus.Problems, opts.Out)
	if j.cache != nil {
		fmt.Fprintf(stderr, "cache %s: %d files reused, %d analysed\n", opts.Cache, j.cache.Hits.Load(), j.cache.Misses.Load())
	}
	return nil
}

// testHook, when set by a test, is called at points of a run ("file" when
// a worker starts on a file, "analyze" before a transcript is analysed,
// "emit" when a file's results are written, "open" when the output set is
// opened, beside the workers) so that
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
