package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/compactbench/compactbench/internal/loader"
	"github.com/compactbench/compactbench/internal/report"
	"github.com/compactbench/compactbench/internal/tokens"
	"github.com/compactbench/compactbench/internal/transcript"
)

func init() { commands = append(commands, newCalibrateCommand) }

func newCalibrateCommand() *cli.Command {
	return &cli.Command{
		Name:      "calibrate",
		Usage:     "fit the calibrated ruler's factors on a corpus's real API usage",
		ArgsUsage: "PATH...",
		Description: "Reads every transcript under the given paths, relates the growth of each\n" +
			"recorded API call's real context to the content added since the previous\n" +
			"call, fits tokens-per-byte factors per content class (plus constants per\n" +
			"message, tool call, tool parameter and image) and writes them to --out,\n" +
			"for `run --calibration FILE`. It prints the factors and the ruler's error\n" +
			"in sample and held out (each file measured with factors fitted without it),\n" +
			"next to chars4's, overall, by source directory and by dominant content class.",
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
			models, err := loadModels(c.String("models"))
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
	if err := checkInputFormat(opts.InputFormat); err != nil {
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
	cal, err := tokens.Calibrate(samples, opts.Anchors, tokens.FitOptions{MinSupport: opts.MinSupport}, opts.HeldOut)
	if err != nil {
		return failErr("calibrate: %v", err)
	}
	f := cal.Factors
	f.Fit.Inputs = opts.Paths
	data, err := tokens.MarshalFactors(f)
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
	return printCalibration(stdout, ins, cal)
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

func printCalibration(w io.Writer, ins []calibrationInput, cal *tokens.Calibration) error {
	f := cal.Factors
	fitted := map[string]bool{}
	for _, n := range f.Fit.Fitted {
		fitted[n] = true
	}
	var rows [][]string
	for _, nf := range f.Named() {
		how := "fixed (prior)"
		if fitted[nf.Name] {
			how = "fitted"
		}
		rows = append(rows, []string{nf.Name, strconv.FormatFloat(nf.Value, 'g', 4, 64), how})
	}
	fmt.Fprintf(w, "factors (%d transcripts, %d calls, %d steps, anchors %s):\n", f.Fit.Transcripts, f.Fit.Calls, f.Fit.Steps, f.Fit.Anchoring)
	if err := report.RenderTable(w, []string{"factor", "value", "how"}, rows); err != nil {
		return err
	}
	type acc struct{ in, ho, c4 []float64 }
	groups := map[string]*acc{}
	get := func(k string) *acc {
		if groups[k] == nil {
			groups[k] = &acc{}
		}
		return groups[k]
	}
	for i := range ins {
		in := cal.InSample[i]
		var ho []float64
		if cal.HeldOut != nil {
			ho = cal.HeldOut[i]
		}
		classes := tokens.SampleClasses(&ins[i].sample, f)
		for _, k := range []string{"all", "source " + ins[i].group} {
			a := get(k)
			a.in = append(a.in, in...)
			a.ho = append(a.ho, ho...)
			a.c4 = append(a.c4, ins[i].chars4...)
		}
		for j, cl := range classes {
			a := get("class " + cl)
			a.in = append(a.in, in[j])
			if j < len(ho) {
				a.ho = append(a.ho, ho[j])
			}
		}
	}
	pct := func(x float64) string { return fmt.Sprintf("%.1f%%", 100*x) }
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
		in, ho, c4 := tokens.AbsErrStats(a.in), tokens.AbsErrStats(a.ho), tokens.AbsErrStats(a.c4)
		row := []string{k, fmt.Sprint(in.N), pct(in.Median), pct(in.P95), pct(ho.Median), pct(ho.P95), "", ""}
		if c4.N > 0 {
			row[6], row[7] = pct(c4.Median), pct(c4.P95)
		}
		rows = append(rows, row)
	}
	fmt.Fprintln(w, "\n|err| on complete non-anchor calls (calibrated in sample, held out; chars4):")
	return report.RenderTable(w, []string{"group", "calls", "median", "p95", "held-out median", "held-out p95", "chars4 median", "chars4 p95"}, rows)
}

// sortGroups orders breakdown rows: "all", then sources, then classes.
func sortGroups(keys []string) {
	rank := func(k string) int {
		switch {
		case k == "all":
			return 0
		case strings.HasPrefix(k, "source "):
			return 1
		}
		return 2
	}
	sort.Slice(keys, func(i, j int) bool {
		if a, b := rank(keys[i]), rank(keys[j]); a != b {
			return a < b
		}
		return keys[i] < keys[j]
	})
}
