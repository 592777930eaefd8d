package main

import (
	"fmt"
	"io"

	"github.com/urfave/cli/v2"

	"github.com/compactbench/compactbench/internal/anchors"
	"github.com/compactbench/compactbench/internal/loader"
	"github.com/compactbench/compactbench/internal/plan"
	"github.com/compactbench/compactbench/internal/report"
	"github.com/compactbench/compactbench/internal/transcript"
	"github.com/compactbench/compactbench/internal/tune"
)

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
	for _, ls := range sets {
		if err := ls.Err(); err != nil {
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
			first, err := plan.LabelsStrict(nil, c.StringSlice("first"))
			if err != nil {
				return err
			}
			second, err := plan.LabelsStrict(nil, c.StringSlice("second"))
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
	return []string{name, tune.Rate(s.Precision()), tune.Rate(s.Recall()), tune.Rate(s.F1())}
}
