package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/compactbench/compactbench/internal/loader"
	"github.com/compactbench/compactbench/internal/plan"
	"github.com/compactbench/compactbench/internal/report"
	"github.com/compactbench/compactbench/internal/tokens"
	"github.com/compactbench/compactbench/internal/transcript"
)

func newCalibrateCommand() *cli.Command {
	return &cli.Command{
		Name:      "calibrate",
		Usage:     "fit the calibrated ruler's factors on a corpus's real API usage",
		ArgsUsage: "PATH...",
		Description: "Reads every transcript under the given paths, relates the growth of each\n" +
			"recorded API call's real context to the content added since the previous\n" +
			"call, fits tokens-per-byte factors per content class (plus constants per\n" +
			"message, tool call, tool parameter and image) and writes them to --out,\n" +
			"for `run --calibration FILE`. Each tokenizer generation of the model table\n" +
			"(--models) gets its own factors, fitted on its calls, or derived from\n" +
			"claude-3's times the tokenizer's ratio when the corpus has none (a note says\n" +
			"so). It prints the factors and the ruler's error in sample and held out:\n" +
			"each file measured with factors fitted without it, and each source folder\n" +
			"(one person's sessions) with factors fitted without that folder; next to\n" +
			"chars4's, overall, per generation, by source folder and by content class.",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "out", Aliases: []string{"o"}, Value: "calibration.json", Usage: "factors file to write"},
			&cli.IntFlag{Name: "jobs", Aliases: []string{"j"}, Value: runtime.NumCPU(), Usage: "files read in parallel"},
			&cli.StringFlag{Name: "overhead", Value: "segments", Usage: "overhead anchors: first (first call only) or segments (also after compactions and model changes)"},
			&cli.IntFlag{Name: "min-support", Value: 20, Usage: "steps a quantity must change in to be fitted"},
			&cli.BoolFlag{Name: "no-holdout", Usage: "skip the leave-one-file-out measurement"},
			inputFormatFlag(),
			modelsFlag(),
		},
		Action: func(c *cli.Context) error {
			mode, ok := tokens.ParseAnchoring(c.String("overhead"))
			if !ok {
				return usageErr("--overhead: want first or segments, got %q", c.String("overhead"))
			}
			models, err := plan.Models(c.String("models"))
			if err != nil {
				return err
			}
			return calibrateCommand(c.Context, calibrateOptions{Models: models,
				Paths: c.Args().Slice(), Out: c.String("out"), Jobs: c.Int("jobs"), Anchors: mode,
				MinSupport: c.Int("min-support"), HeldOut: !c.Bool("no-holdout"), InputFormat: c.String("input-format"),
			}, c.App.Writer, c.App.ErrWriter)
		},
	}
}

type calibrateOptions struct {
	Paths       []string
	Out         string
	Jobs        int
	Anchors     tokens.Anchoring
	MinSupport  int
	HeldOut     bool
	InputFormat string
	Models      *tokens.Models
}

// calibrationInput is what one transcript contributes: its fit sample and
// chars4's errors on the same calls, for comparison.
type calibrationInput struct {
	sample tokens.Sample
	chars4 []float64
	group  string
}

// calibrateCommand fits the factors on the corpus, writes them and prints
// them with the ruler's errors.
func calibrateCommand(ctx context.Context, opts calibrateOptions, stdout, stderr io.Writer) error {
	files, err := calibrationFiles(opts)
	if err != nil {
		return err
	}
	ins, err := collectCalibration(ctx, opts, files)
	if err != nil {
		return err
	}
	cal, byFolder, err := fitCalibration(opts, ins)
	if err != nil {
		return err
	}
	if err := writeFactors(opts, cal); err != nil {
		return err
	}
	for _, n := range cal.Notes {
		fmt.Fprintln(stderr, "note:", n)
	}
	return printCalibration(stdout, ins, cal, byFolder, opts.Models)
}

// calibrationFiles validates the options and walks the paths.
func calibrationFiles(opts calibrateOptions) ([]loader.File, error) {
	if len(opts.Paths) == 0 {
		return nil, usageErr("calibrate: no input paths")
	}
	if err := plan.Jobs(opts.Jobs); err != nil {
		return nil, err
	}
	if err := plan.InputFormat(opts.InputFormat); err != nil {
		return nil, err
	}
	inputs, err := loader.Walk(opts.Paths)
	if err != nil {
		return nil, usageErr("%v", err)
	}
	if len(inputs.Files) == 0 {
		return nil, usageErr("no transcript files under %s", strings.Join(opts.Paths, ", "))
	}
	return inputs.Files, nil
}

// collectCalibration reads every file with -j workers into fit samples and
// chars4's errors, in path order.
func collectCalibration(ctx context.Context, opts calibrateOptions, files []loader.File) ([]calibrationInput, error) {
	chars4, _ := tokens.ByName(tokens.Chars4)
	var ins []calibrationInput
	work := func(ctx context.Context, i int) ([]calibrationInput, error) {
		var out []calibrationInput
		err := loader.ReadFile(files[i].Path, loader.Options{Format: opts.InputFormat}, func(t *transcript.Transcript) error {
			out = append(out, calibrationOf(t, opts, chars4))
			return ctx.Err()
		})
		return out, err
	}
	emit := func(i int, r []calibrationInput) error {
		ins = append(ins, r...)
		return nil
	}
	err := loader.Ordered(ctx, len(files), opts.Jobs, work, emit)
	return ins, err
}

// calibrationOf is one transcript's fit sample and chars4's errors on its
// complete non-anchor calls.
func calibrationOf(t *transcript.Transcript, opts calibrateOptions, chars4 *tokens.Ruler) calibrationInput {
	in := calibrationInput{sample: tokens.Collect(t, opts.Anchors, opts.Models), group: groupOf(opts.Paths, t.Path)}
	if in.sample.Gen == "" {
		in.sample.Gen = tokens.ReferenceGeneration
	}
	for _, c := range tokens.EstimateCalls(t, []*tokens.Ruler{chars4}, opts.Anchors, opts.Models).Calls {
		if !c.Anchor && c.Complete {
			in.chars4 = append(in.chars4, c.Err(0))
		}
	}
	return in
}

// fitCalibration fits the factors (held out by file unless --no-holdout)
// and, with held-out figures and several source folders, again leaving one
// folder out: a folder is one person's sessions, so this is how the factors
// behave on a stranger's.
func fitCalibration(opts calibrateOptions, ins []calibrationInput) (cal, byFolder *tokens.Calibration, err error) {
	samples := make([]tokens.Sample, len(ins))
	for i := range ins {
		samples[i] = ins[i].sample
	}
	fitOpt := tokens.FitOptions{MinSupport: opts.MinSupport}
	if cal, err = tokens.Calibrate(samples, opts.Anchors, fitOpt, opts.Models, opts.HeldOut, nil); err != nil {
		return nil, nil, failErr("calibrate: %v", err)
	}
	if !opts.HeldOut {
		return cal, nil, nil
	}
	ids := map[string]int{}
	folds := make([]int, len(ins))
	for i := range ins {
		k, ok := ids[ins[i].group]
		if !ok {
			k = len(ids)
			ids[ins[i].group] = k
		}
		folds[i] = k
	}
	if len(ids) > 1 {
		if byFolder, err = tokens.Calibrate(samples, opts.Anchors, fitOpt, opts.Models, true, folds); err != nil {
			return nil, nil, failErr("calibrate: %v", err)
		}
	}
	return cal, byFolder, nil
}

// writeFactors writes the fitted factors to --out, atomically.
func writeFactors(opts calibrateOptions, cal *tokens.Calibration) error {
	for _, f := range cal.Set.Generations {
		if f.Fit != nil {
			f.Fit.Inputs = opts.Paths
		}
	}
	data, err := tokens.MarshalFactors(cal.Set)
	if err != nil {
		return err
	}
	dir, name := filepath.Split(opts.Out)
	if dir == "" {
		dir = "."
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("output directory: %w", err)
	}
	return report.WriteFileAtomic(dir, name, data)
}

// groupOf names a transcript's source for breakdowns: the input path that
// holds it (its last element) and the first directory below it.
func groupOf(roots []string, path string) string {
	for _, r := range roots {
		r = filepath.ToSlash(filepath.Clean(r))
		if rel, ok := strings.CutPrefix(path, r+"/"); ok {
			if i := strings.IndexByte(rel, '/'); i > 0 {
				return filepath.Base(r) + "/" + rel[:i]
			}
			return filepath.Base(r)
		}
	}
	return filepath.Dir(path)
}

// printCalibration prints the factors per tokenizer generation, the
// notes, and the ruler's errors per group beside chars4's.
func printCalibration(w io.Writer, ins []calibrationInput, cal, byFolder *tokens.Calibration, models *tokens.Models) error {
	if err := printFactors(w, cal, models); err != nil {
		return err
	}
	for _, n := range cal.Notes {
		fmt.Fprintln(w, "note:", n)
	}
	groups := errorGroups(ins, cal, byFolder, models)
	fmt.Fprintln(w, "\n|err| on complete non-anchor calls: calibrated in sample, held out by file and by source folder\n(factors fitted without the call's file / folder; the folder figure is the one to quote), and chars4:")
	return report.RenderTable(w, []string{"group", "calls", "median", "p95", "file-out median", "file-out p95",
		"folder-out median", "folder-out p95", "chars4 median", "chars4 p95"}, errorRows(groups))
}

// printFactors prints the factor table: one column per generation, "prior"
// marking a factor too little data fitted.
func printFactors(w io.Writer, cal *tokens.Calibration, models *tokens.Models) error {
	gens := models.Generations()
	header := []string{"factor"}
	for _, g := range gens {
		f := cal.Set.Generations[g]
		how := f.Source
		if f.Fit != nil && f.Source == "fitted" {
			how = fmt.Sprintf("%d calls", f.Fit.Calls)
		}
		header = append(header, g+" ("+how+")")
	}
	var rows [][]string
	for k, nf := range tokens.DefaultFactors().Named() {
		row := []string{nf.Name}
		for _, g := range gens {
			f := cal.Set.Generations[g]
			v := strconv.FormatFloat(f.Named()[k].Value, 'g', 4, 64)
			if f.Source == "fitted" && f.Fit != nil && !slices.Contains(f.Fit.Fitted, nf.Name) {
				v += " (prior)"
			}
			row = append(row, v)
		}
		rows = append(rows, row)
	}
	fmt.Fprintf(w, "factors per tokenizer generation (anchors %s; \"prior\": too little data to fit):\n", cal.Set.Generations[tokens.ReferenceGeneration].Fit.Anchoring)
	return report.RenderTable(w, header, rows)
}

// errorAcc gathers one group's errors: in sample, held out by file, held
// out by folder, and chars4's.
type errorAcc struct{ in, ho, hf, c4 []float64 }

// errorGroups gathers the errors of every call per group: all, per
// tokenizer generation, per source folder and per content class.
func errorGroups(ins []calibrationInput, cal, byFolder *tokens.Calibration, models *tokens.Models) map[string]*errorAcc {
	groups := map[string]*errorAcc{}
	get := func(k string) *errorAcc {
		if groups[k] == nil {
			groups[k] = &errorAcc{}
		}
		return groups[k]
	}
	for i := range ins {
		in := cal.InSample[i]
		var ho, hf []float64
		if cal.HeldOut != nil {
			ho = cal.HeldOut[i]
		}
		if byFolder != nil {
			hf = byFolder.HeldOut[i]
		}
		for _, k := range []string{"all", "tokenizer " + ins[i].sample.Gen, "source " + ins[i].group} {
			a := get(k)
			a.in = append(a.in, in...)
			a.ho = append(a.ho, ho...)
			a.hf = append(a.hf, hf...)
			a.c4 = append(a.c4, ins[i].chars4...)
		}
		f, _ := cal.Set.For(ins[i].sample.Gen, models)
		for j, cl := range tokens.SampleClasses(&ins[i].sample, f) {
			a := get("class " + cl)
			a.in = append(a.in, in[j])
			if j < len(ho) {
				a.ho = append(a.ho, ho[j])
			}
			if j < len(hf) {
				a.hf = append(a.hf, hf[j])
			}
		}
	}
	return groups
}

// errorRows renders the groups' median and p95 errors, in sortGroups order.
func errorRows(groups map[string]*errorAcc) [][]string {
	pct := func(s tokens.ErrStats) (string, string) {
		if s.N == 0 {
			return "", ""
		}
		return fmt.Sprintf("%.1f%%", 100*s.Median), fmt.Sprintf("%.1f%%", 100*s.P95)
	}
	var keys []string
	for k := range groups {
		keys = append(keys, k)
	}
	sortGroups(keys)
	var rows [][]string
	for _, k := range keys {
		a := groups[k]
		if len(a.in) == 0 && len(a.c4) == 0 {
			continue
		}
		in := tokens.AbsErrStats(a.in)
		row := []string{k, fmt.Sprint(in.N)}
		for _, s := range []tokens.ErrStats{in, tokens.AbsErrStats(a.ho), tokens.AbsErrStats(a.hf), tokens.AbsErrStats(a.c4)} {
			m, p := pct(s)
			row = append(row, m, p)
		}
		rows = append(rows, row)
	}
	return rows
}

// sortGroups orders breakdown rows: "all", then sources, then classes.
func sortGroups(keys []string) {
	rank := func(k string) int {
		switch {
		case k == "all":
			return 0
		case strings.HasPrefix(k, "tokenizer "):
			return 1
		case strings.HasPrefix(k, "source "):
			return 2
		}
		return 3
	}
	sort.Slice(keys, func(i, j int) bool {
		if a, b := rank(keys[i]), rank(keys[j]); a != b {
			return a < b
		}
		return keys[i] < keys[j]
	})
}
