// Package aggregate folds per-transcript results into the corpus's
// aggregates: Summary (summary.json: corpus totals, ruler errors, each
// strategy's registered figures, rule-set scores, rereads, the verdict),
// ReportData (what the charts need beyond summary.json), the gate's
// comparison of two summaries under tolerances, and tune's rows and Pareto
// fronts. It is pure: no I/O; internal/report renders and writes what it
// computes.
package aggregate
