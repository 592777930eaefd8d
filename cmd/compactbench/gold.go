package main

import (
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/compactbench/compactbench/internal/anchors"
	"github.com/compactbench/compactbench/internal/loader"
	"github.com/compactbench/compactbench/internal/report"
	"github.com/compactbench/compactbench/internal/transcript"
)

func init() { commands = append(commands, newAgreeCommand) }

// loadGold reads the transcripts under paths and returns, for each label
// set, the transcripts it labels (in path order) with their labels placed
// on turns, and the labels that could not be placed (each also told on
// warn, as not scored).
func loadGold(paths []string, format string, warn io.Writer, sets ...*anchors.LabelSet) ([][]anchors.GoldDoc, []string, error) {
	inputs, err := loader.Walk(paths)
	if err != nil {
		return nil, nil, usageErr("%v", err)
	}
	out := make([][]anchors.GoldDoc, len(sets))
	var problems []string
	for _, f := range inputs.Files {
		err := loader.ReadFile(f.Path, loader.Options{Format: format}, func(t *transcript.Transcript) error {
			var turns []transcript.Turn
			for k, ls := range sets {
				labels, labelled := ls.For(t.ID, t.Path)
				if !labelled {
					continue
				}
				if turns == nil {
					turns = t.Turns()
				}
				ok, bad := anchors.ResolveLabels(labels, turns)
				for _, b := range bad {
					problems = append(problems, b.String())
					fmt.Fprintf(warn, "label problem (not scored): %s\n", b)
				}
				d := anchors.NewGoldDoc(t.ID, turns, ok)
				d.Group = anchors.GroupOf(paths, f.Path)
				out[k] = append(out[k], d)
			}
			return nil
		})
		if err != nil {
			return nil, nil, err
		}
	}
	return out, problems, nil
}

func newAgreeCommand() *cli.Command {
	return &cli.Command{
		Name:      "agree",
		Usage:     "agreement of two readers' gold labels on the transcripts both labelled",
		ArgsUsage: "PATH...",
		Description: "Reads the transcripts under PATH, places both label files' labels on their turns\n" +
			"(by prompt uuid, timestamp or checked index) and scores the second reading against the\n" +
			"first: turn-level precision, recall and F1 (a turn is an anchor or not), Cohen's kappa\n" +
			"over every turn, F1 when the type must match too, and F1 per type. That agreement is\n" +
			"the ceiling a detector can be expected to reach on such labels.",
		Flags: []cli.Flag{
			&cli.StringSliceFlag{Name: "first", Required: true, Usage: "the first reading: label file(s) or directory"},
			&cli.StringSliceFlag{Name: "second", Required: true, Usage: "the second reading: label file(s) or directory"},
			inputFormatFlag(),
		},
		Action: func(c *cli.Context) error {
			if c.NArg() == 0 {
				return usageErr("agree: give the transcripts' paths")
			}
			first, err := loadLabelsStrict(nil, c.StringSlice("first"))
			if err != nil {
				return err
			}
			second, err := loadLabelsStrict(nil, c.StringSlice("second"))
			if err != nil {
				return err
			}
			if first == nil || second == nil {
				return usageErr("agree: no labels read")
			}
			docs, _, err := loadGold(c.Args().Slice(), c.String("input-format"), c.App.ErrWriter, first, second)
			if err != nil {
				return err
			}
			a, b := pairDocs(docs[0], docs[1])
			if len(a) == 0 {
				return failErr("agree: no transcript is labelled by both readings")
			}
			return writeAgreement(c.App.Writer, anchors.Agree(a, b))
		},
	}
}

// pairDocs keeps the transcripts both readings label, in the first's order.
func pairDocs(first, second []anchors.GoldDoc) (a, b []anchors.GoldDoc) {
	idx := map[string]int{}
	for i, d := range second {
		idx[d.ID] = i
	}
	for _, d := range first {
		if j, ok := idx[d.ID]; ok && len(second[j].Gold) == len(d.Gold) {
			a, b = append(a, d), append(b, second[j])
		}
	}
	return a, b
}

func writeAgreement(w io.Writer, a anchors.Agreement) error {
	fmt.Fprintf(w, "%d transcripts read twice, %d turns; anchors: first %d, second %d\n", a.Sessions, a.Turns,
		a.Score.Turn.TP+a.Score.Turn.FN, a.Score.Turn.TP+a.Score.Turn.FP)
	header := []string{"measure", "precision", "recall", "F1"}
	rows := [][]string{scoreRow("turn (any type)", a.Score.Turn), scoreRow("typed (type must match)", a.Score.Typed)}
	for k, t := range anchors.Types {
		rows = append(rows, scoreRow(string(t), a.Score.ByType[k]))
	}
	if err := report.RenderLeft(w, header, rows, 0); err != nil {
		return err
	}
	fmt.Fprintf(w, "Cohen's kappa (anchor or not, every turn): %.2f\n", a.Kappa)
	return nil
}

func scoreRow(name string, s anchors.Score) []string {
	return []string{name, rate(s.Precision()), rate(s.Recall()), rate(s.F1())}
}

func rate(v float64, ok bool) string {
	if !ok {
		return "–"
	}
	return strconv.FormatFloat(v, 'f', 2, 64)
}

// recallOf renders a recall as "found/labelled".
func recallOf(s anchors.Score) string {
	if s.TP+s.FN == 0 {
		return "–"
	}
	return fmt.Sprintf("%d/%d", s.TP, s.TP+s.FN)
}

// goldCV is `tune --cv K`: fits the rule set's rules to gold labels with
// k-fold cross-validation by transcript and prints the held-out figures
// beside the trivial baselines.
func goldCV(w io.Writer, set *anchors.RuleSet, docs []anchors.GoldDoc, k int, floor float64) error {
	if len(docs) < k {
		return usageErr("tune --cv %d: only %d gold-labelled transcripts", k, len(docs))
	}
	res := anchors.CrossValidate(set, docs, k, floor)
	byFolder := anchors.CrossValidateByGroup(set, docs, floor)
	var every, edit, whole anchors.GoldScore
	everyL, editL := map[string]anchors.GoldScore{}, map[string]anchors.GoldScore{}
	for i := range docs {
		d := &docs[i]
		e, x := anchors.ScoreTurns(anchors.BaselineEveryTurn(d), d.Gold), anchors.ScoreTurns(anchors.BaselineAnyEdit(d), d.Gold)
		every.Add(e)
		edit.Add(x)
		whole.Add(anchors.ScoreTurns(set.Predict(d.Turns), d.Gold))
		a, b := everyL[d.Lang], editL[d.Lang]
		a.Add(e)
		b.Add(x)
		everyL[d.Lang], editL[d.Lang] = a, b
	}
	turns, labelled := 0, 0
	for _, d := range docs {
		turns += len(d.Gold)
		for _, g := range d.Gold {
			if g != "" {
				labelled++
			}
		}
	}
	fmt.Fprintf(w, "gold: %d transcripts, %d turns, %d anchors; rule set %s, %d-fold cross-validation by transcript, precision floor %.2f\n",
		len(docs), turns, labelled, set.Name, k, floor)
	header := []string{"detector", "precision", "recall", "F1", "typed F1"}
	for _, t := range anchors.Types {
		header = append(header, "recall "+string(t))
	}
	row := func(name string, g anchors.GoldScore) []string {
		r := []string{name, rate(g.Turn.Precision()), rate(g.Turn.Recall()), rate(g.Turn.F1()), rate(g.Typed.F1())}
		for k := range anchors.Types {
			r = append(r, recallOf(g.ByType[k]))
		}
		return r
	}
	rows := [][]string{
		row(set.Name+" fitted, cross-validated", res.Held),
		row(fmt.Sprintf("%s fitted, leave-one-folder-out (%d folders)", set.Name, byFolder.K), byFolder.Held),
		row(set.Name+" fitted on all (optimistic)", res.Fitted),
		row(set.Name+" as written (every rule)", whole),
		row("every turn is an anchor", every),
		row("any turn with a successful edit", edit),
	}
	if err := report.RenderLeft(w, header, rows, 0); err != nil {
		return err
	}
	ef, _ := edit.Turn.F1()
	if f, _ := res.Held.Turn.F1(); f <= ef {
		fmt.Fprintf(w, "⚠ the cross-validated %s does not beat \"any turn with a successful edit\" (F1 %.2f ≤ %.2f)\n", set.Name, f, ef)
	}
	if f, _ := byFolder.Held.Turn.F1(); f <= ef {
		fmt.Fprintf(w, "⚠ %s left one folder out does not beat \"any turn with a successful edit\" (F1 %.2f ≤ %.2f)\n", set.Name, f, ef)
	}
	langs := make([]string, 0, len(res.ByLang))
	for l := range res.ByLang {
		langs = append(langs, l)
	}
	sort.Strings(langs)
	rows = nil
	for _, l := range langs {
		rows = append(rows, row(l+": cross-validated", res.ByLang[l]), row(l+": leave-one-folder-out", byFolder.ByLang[l]),
			row(l+": any edit", editL[l]), row(l+": every turn", everyL[l]))
	}
	fmt.Fprintln(w, "\nby the prompts' language:")
	if err := report.RenderLeft(w, header, rows, 0); err != nil {
		return err
	}
	var names []string
	for r, on := range res.All {
		if on {
			names = append(names, set.Rules[r].Name)
		}
	}
	fmt.Fprintf(w, "\nrules enabled when fitted on every transcript: %s\n", strings.Join(names, ", "))
	for f, on := range res.Folds {
		n := 0
		for _, x := range on {
			if x {
				n++
			}
		}
		fmt.Fprintf(w, "fold %d: %d of %d rules\n", f, n, len(on))
	}
	return nil
}
