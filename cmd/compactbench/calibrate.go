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

func calibrateCommand(ctx context.Context, opts calibrateOptions, stdout, stderr io.Writer) error {
	if len(opts.Paths) == 0 {
		return usageErr("calibrate: no input paths")
	}
	if err := plan.Jobs(opts.Jobs); err != nil {
		return err
	}
	if err := plan.InputFormat(opts.InputFormat); err != nil {
		return err
	}
	inputs, err := loader.Walk(opts.Paths)
	if err != nil {
		return usageErr("%v", err)
	}
	files := inputs.Files
	if len(files) == 0 {
		return usageErr("no transcript files under %s", strings.Join(opts.Paths, ", "))
	}
	chars4, _ := tokens.ByName(tokens.Chars4)
	var ins []calibrationInput
	work := func(ctx context.Context, i int) ([]calibrationInput, error) {
		var out []calibrationInput
		err := loader.ReadFile(files[i].Path, loader.Options{Format: opts.InputFormat}, func(t *transcript.Transcript) error {
			in := calibrationInput{sample: tokens.Collect(t, opts.Anchors, opts.Models), group: groupOf(opts.Paths, t.Path)}
			if in.sample.Gen == "" {
				in.sample.Gen = tokens.ReferenceGeneration
			}
			for _, c := range tokens.EstimateCalls(t, []*tokens.Ruler{chars4}, opts.Anchors, opts.Models).Calls {
				if !c.Anchor && c.Complete {
					in.chars4 = append(in.chars4, c.Err(0))
				}
			}
			out = append(out, in)
			return ctx.Err()
		})
		return out, err
	}
	emit := func(i int, r []calibrationInput) error {
		ins = append(ins, r...)
		return nil
	}
	if err := loader.Ordered(ctx, len(files), opts.Jobs, work, emit); err != nil {
		return err
	}
	samples := make([]tokens.Sample, len(ins))
	for i := range ins {
		samples[i] = ins[i].sample
	}
	fitOpt := tokens.FitOptions{MinSupport: opts.MinSupport}
	cal, err := tokens.Calibrate(samples, opts.Anchors, fitOpt, opts.Models, opts.HeldOut, nil)
	if err != nil {
		return failErr("calibrate: %v", err)
	}
	// Leave-one-folder-out: a folder is one person's sessions, so this is
	// how the factors behave on a stranger's.
	var byFolder *tokens.Calibration
	if opts.HeldOut {
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
				return failErr("calibrate: %v", err)
			}
		}
	}
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
	if err := report.WriteFileAtomic(dir, name, data); err != nil {
		return err
	}
	for _, n := range cal.Notes {
		fmt.Fprintln(stderr, "note:", n)
	}
	return printCalibration(stdout, ins, cal, byFolder, opts.Models)
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

func printCalibration(w io.Writer, ins []calibrationInput, cal, byFolder *tokens.Calibration, models *tokens.Models) error {
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
	if err := report.RenderTable(w, header, rows); err != nil {
		return err
	}
	for _, n := range cal.Notes {
		fmt.Fprintln(w, "note:", n)
	}
	type acc struct{ in, ho, hf, c4 []float64 }
	groups := map[string]*acc{}
	get := func(k string) *acc {
		if groups[k] == nil {
			groups[k] = &acc{}
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
		f, _ := cal.Set.For(ins[i].sample.Gen, models)
		classes := tokens.SampleClasses(&ins[i].sample, f)
		for _, k := range []string{"all", "tokenizer " + ins[i].sample.Gen, "source " + ins[i].group} {
			a := get(k)
			a.in = append(a.in, in...)
			a.ho = append(a.ho, ho...)
			a.hf = append(a.hf, hf...)
			a.c4 = append(a.c4, ins[i].chars4...)
		}
		for j, cl := range classes {
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
	rows = rows[:0]
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
	fmt.Fprintln(w, "\n|err| on complete non-anchor calls: calibrated in sample, held out by file and by source folder\n(factors fitted without the call's file / folder; the folder figure is the one to quote), and chars4:")
	return report.RenderTable(w, []string{"group", "calls", "median", "p95", "file-out median", "file-out p95",
		"folder-out median", "folder-out p95", "chars4 median", "chars4 p95"}, rows)
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
