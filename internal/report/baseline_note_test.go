package report

import "testing"

func TestBaselineNote(t *testing.T) {
	f := func(v float64) *float64 { return &v }
	yes, no := true, false
	scores := func(v float64) *LabelScores { return &LabelScores{F1: f(v)} }
	tests := []struct {
		name string
		sets []RuleSetSummary
		want string
	}{
		{"no baselines", []RuleSetSummary{{Name: "codelet", Gold: scores(0.5)}}, ""},
		{"baselines without labels", []RuleSetSummary{{Name: "baseline-every-turn"}, {Name: "baseline-any-edit"}}, ""},
		{"gold, one set below any-edit", []RuleSetSummary{
			{Name: "codelet", Gold: scores(0.2), BelowAnyEdit: &yes},
			{Name: "gold", Gold: scores(0.8), BelowAnyEdit: &no},
			{Name: "baseline-every-turn", Gold: scores(0.29), BelowAnyEdit: &yes},
			{Name: "baseline-any-edit", Gold: scores(0.5)},
		}, "Trivial detectors on the same gold labels: every turn is an anchor F1 0.290, any turn with a " +
			"successful edit F1 0.500. Not above any-edit on gold: codelet."},
		{"evidence only", []RuleSetSummary{
			{Name: "baseline-every-turn", Evidence: scores(0.41)},
			{Name: "baseline-any-edit", Evidence: scores(0.19)},
		}, "Trivial detectors on the same evidence labels: every turn is an anchor F1 0.410, any turn with a " +
			"successful edit F1 0.190."},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := baselineNote(&Summary{Anchors: tt.sets}); got != tt.want {
				t.Errorf("baselineNote =\n%q\nwant\n%q", got, tt.want)
			}
		})
	}
}
