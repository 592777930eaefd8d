package report

import (
	"github.com/compactbench/compactbench/internal/aggregate"
)

// The aggregates the reports render are computed by internal/aggregate
// (pure: no I/O); these names keep report's API for its callers.
type (
	// Summary is summary.json (aggregate.Summary).
	Summary = aggregate.Summary
	// Meta describes the run (aggregate.Meta).
	Meta = aggregate.Meta
	// Totals are counts summed over transcripts (aggregate.Totals).
	Totals = aggregate.Totals
	// Corpus totals over every transcript read (aggregate.Corpus).
	Corpus = aggregate.Corpus
	// StrategyStats are one strategy's figures (aggregate.StrategyStats).
	StrategyStats = aggregate.StrategyStats
	// Strategies maps strategy ids to their aggregates.
	Strategies = aggregate.Strategies
	// Rulers are the token rulers' errors against real usage.
	Rulers = aggregate.Rulers
	// RulerErrors are one ruler's errors.
	RulerErrors = aggregate.RulerErrors
	// CalibrationFigures are the calibrated ruler's cross-validation.
	CalibrationFigures = aggregate.CalibrationFigures
	// RuleSetSummary is one rule set's anchor aggregates.
	RuleSetSummary = aggregate.RuleSetSummary
	// TypeRecall is recall per label type.
	TypeRecall = aggregate.TypeRecall
	// LabelScores are precision, recall and F1 against labels.
	LabelScores = aggregate.LabelScores
	// SummarizerSummary describes model-written summaries.
	SummarizerSummary = aggregate.SummarizerSummary
	// SummarizerStrategy is one strategy's summarizer figures.
	SummarizerStrategy = aggregate.SummarizerStrategy
	// Setting is one run setting shown in the reports.
	Setting = aggregate.Setting
	// Histogram bins values for the charts.
	Histogram = aggregate.Histogram
	// ProblemClass is a kind of input problem with its count.
	ProblemClass = aggregate.ProblemClass
	// ReportData is what the reports need beyond summary.json.
	ReportData = aggregate.ReportData
	// Verdict ranks the strategies.
	Verdict = aggregate.Verdict
	// VerdictLine is one strategy in the verdict.
	VerdictLine = aggregate.VerdictLine
	// RereadStats total the behaviour check at recorded compactions.
	RereadStats = aggregate.RereadStats
	// GateFigure is a gated figure.
	GateFigure = aggregate.GateFigure
	// Tolerances are the gate's allowed worsening per figure.
	Tolerances = aggregate.Tolerances
	// GateCheck is one compared figure.
	GateCheck = aggregate.GateCheck
	// GateResult is the gate's verdict.
	GateResult = aggregate.GateResult
	// TuneRow is a row of the tune table.
	TuneRow = aggregate.TuneRow
)

// SchemaVersion is bumped when summary.json changes incompatibly.
const SchemaVersion = aggregate.SchemaVersion

// RankingRule says how the verdict ranks.
const RankingRule = aggregate.RankingRule

// GateFigures are the gated figures, in report order.
var GateFigures = aggregate.GateFigures

// NewSummary starts an aggregate (aggregate.NewSummary).
func NewSummary(m Meta) *Summary { return aggregate.NewSummary(m) }

// NewReportData returns an empty report-data collector.
func NewReportData(want string, settings []Setting) *ReportData {
	return aggregate.NewReportData(want, settings)
}

// DefaultTolerances returns the registry's default tolerances.
func DefaultTolerances() *Tolerances { return aggregate.DefaultTolerances() }

// ParseTolerances reads a tolerances file over the defaults.
func ParseTolerances(data []byte, origin string) (*Tolerances, error) {
	return aggregate.ParseTolerances(data, origin)
}

// ReadSummary parses summary.json (aggregate.ReadSummary).
func ReadSummary(data []byte, origin string) (*Summary, error) {
	return aggregate.ReadSummary(data, origin)
}

// Gate compares current with baseline under the tolerances.
func Gate(baseline, current *Summary, tol *Tolerances) *GateResult {
	return aggregate.Gate(baseline, current, tol)
}

// TuneRows turns one setting's aggregate into tune rows.
func TuneRows(setting int, params func(strategy, ruleSet string) string, s *Summary, rulesOf map[string]string) []TuneRow {
	return aggregate.TuneRows(setting, params, s, rulesOf)
}

// MarkPareto marks each group's Pareto front.
func MarkPareto(rows []TuneRow) { aggregate.MarkPareto(rows) }

// DedupTune keeps one row per group and setting.
func DedupTune(rows []TuneRow) []TuneRow { return aggregate.DedupTune(rows) }

// SortTune orders rows by group and setting.
func SortTune(rows []TuneRow) []TuneRow { return aggregate.SortTune(rows) }

// Helpers the renderers share with the aggregation.
func pctLabel(v float64) string                       { return aggregate.PctLabel(v) }
func plural(n int, noun string) string                { return aggregate.Plural(n, noun) }
func pct0Or(v *float64) string                        { return aggregate.PctOr(v) }
func ruleSet(s *Summary, name string) *RuleSetSummary { return aggregate.RuleSet(s, name) }
func f1(ls *LabelScores) *float64                     { return aggregate.F1(ls) }
