package tune

import (
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"

	"github.com/compactbench/compactbench/internal/anchors"
	"github.com/compactbench/compactbench/internal/exitcode"
	"github.com/compactbench/compactbench/internal/report"
)

// GoldCV is `tune --cv K`: it fits the rule set's rules to the gold-labelled
// transcripts with k-fold cross-validation by transcript and prints the
// held-out figures (and those of fitting without each folder, judged on it)
// beside the trivial baselines, per prompt language, and
// the rules the fit enables. Fewer transcripts than folds is a usage error.
func GoldCV(w io.Writer, set *anchors.RuleSet, docs []anchors.GoldDoc, k int, floor float64) error {
	if len(docs) < k {
		return exitcode.Usagef("tune --cv %d: only %d gold-labelled transcripts", k, len(docs))
	}
	res := anchors.CrossValidate(set, docs, k, floor)
	byFolder := anchors.CrossValidateByGroup(set, docs, floor)
	b := scoreBaselines(set, docs)
	turns, labelled := goldCounts(docs)
	fmt.Fprintf(w, "gold: %d transcripts, %d turns, %d anchors; rule set %s, %d-fold cross-validation by transcript, precision floor %.2f\n",
		len(docs), turns, labelled, set.Name, k, floor)
	rows := [][]string{
		goldRow(set.Name+" fitted, cross-validated", res.Held),
		goldRow(fmt.Sprintf("%s fitted, leave-one-folder-out (%d folders)", set.Name, byFolder.K), byFolder.Held),
		goldRow(set.Name+" fitted on all (optimistic)", res.Fitted),
		goldRow(set.Name+" as written (every rule)", b.whole),
		goldRow("every turn is an anchor", b.every),
		goldRow("any turn with a successful edit", b.edit),
	}
	if err := report.RenderLeft(w, goldHeader(), rows, 0); err != nil {
		return err
	}
	ef, _ := b.edit.Turn.F1()
	if f, _ := res.Held.Turn.F1(); f <= ef {
		fmt.Fprintf(w, "⚠ the cross-validated %s does not beat \"any turn with a successful edit\" (F1 %.2f ≤ %.2f)\n", set.Name, f, ef)
	}
	if f, _ := byFolder.Held.Turn.F1(); f <= ef {
		fmt.Fprintf(w, "⚠ %s left one folder out does not beat \"any turn with a successful edit\" (F1 %.2f ≤ %.2f)\n", set.Name, f, ef)
	}
	if err := byLanguage(w, res, byFolder, b); err != nil {
		return err
	}
	fittedRules(w, set, res)
	return nil
}

// baselines are the scores GoldCV compares the fit with: the rule set as
// written and the two trivial baselines, pooled and (trivial ones) per
// prompt language.
type baselines struct {
	every, edit, whole anchors.GoldScore
	everyL, editL      map[string]anchors.GoldScore
}

// scoreBaselines scores the rule set as written and the trivial baselines.
func scoreBaselines(set *anchors.RuleSet, docs []anchors.GoldDoc) baselines {
	b := baselines{everyL: map[string]anchors.GoldScore{}, editL: map[string]anchors.GoldScore{}}
	for i := range docs {
		d := &docs[i]
		e, x := anchors.ScoreTurns(anchors.BaselineEveryTurn(d), d.Gold), anchors.ScoreTurns(anchors.BaselineAnyEdit(d), d.Gold)
		b.every.Add(e)
		b.edit.Add(x)
		b.whole.Add(anchors.ScoreTurns(set.Predict(d.Turns), d.Gold))
		el, xl := b.everyL[d.Lang], b.editL[d.Lang]
		el.Add(e)
		xl.Add(x)
		b.everyL[d.Lang], b.editL[d.Lang] = el, xl
	}
	return b
}

// goldCounts counts the turns and the labelled turns.
func goldCounts(docs []anchors.GoldDoc) (turns, labelled int) {
	for _, d := range docs {
		turns += len(d.Gold)
		for _, g := range d.Gold {
			if g != "" {
				labelled++
			}
		}
	}
	return turns, labelled
}

// goldHeader is the columns of GoldCV's tables.
func goldHeader() []string {
	header := []string{"detector", "precision", "recall", "F1", "typed F1"}
	for _, t := range anchors.Types {
		header = append(header, "recall "+string(t))
	}
	return header
}

// goldRow is one detector's row.
func goldRow(name string, g anchors.GoldScore) []string {
	r := []string{name, Rate(g.Turn.Precision()), Rate(g.Turn.Recall()), Rate(g.Turn.F1()), Rate(g.Typed.F1())}
	for k := range anchors.Types {
		r = append(r, recallOf(g.ByType[k]))
	}
	return r
}

// byLanguage prints the held-out and trivial scores per prompt language.
func byLanguage(w io.Writer, res, byFolder anchors.CVResult, b baselines) error {
	langs := make([]string, 0, len(res.ByLang))
	for l := range res.ByLang {
		langs = append(langs, l)
	}
	sort.Strings(langs)
	var rows [][]string
	for _, l := range langs {
		rows = append(rows, goldRow(l+": cross-validated", res.ByLang[l]), goldRow(l+": leave-one-folder-out", byFolder.ByLang[l]),
			goldRow(l+": any edit", b.editL[l]), goldRow(l+": every turn", b.everyL[l]))
	}
	fmt.Fprintln(w, "\nby the prompts' language:")
	return report.RenderLeft(w, goldHeader(), rows, 0)
}

// fittedRules prints the rules the fit on every transcript enables and
// how many each fold's fit enables.
func fittedRules(w io.Writer, set *anchors.RuleSet, res anchors.CVResult) {
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
}

// Rate renders a rate with two decimals, or "–" when it is undefined.
func Rate(v float64, ok bool) string {
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
