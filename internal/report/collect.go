package report

import (
	"fmt"
)

// problemsGrid is the reports' problems table: the most frequent classes,
// each with its first occurrence, then the rest in one row.
func problemsGrid(d *ReportData) ([]string, [][]string) {
	var rows [][]string
	for _, p := range d.TopProblems(topProblems) {
		rows = append(rows, []string{itoa(p.Count), p.Reason, fmt.Sprintf("%s:%d", p.Example.Path, p.Example.Line)})
	}
	if d.OtherProblems > 0 {
		rows = append(rows, []string{itoa(d.OtherProblems), "(other kinds)", ""})
	}
	return []string{"count", "problem", "first at"}, rows
}
