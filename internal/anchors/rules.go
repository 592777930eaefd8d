package anchors

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"regexp"
	"sync"
)

// Type is an anchor type (docs/strategies.md, anchor types).
type Type string

// Anchor types. The weights the seeds give them are defaults of the rule
// files, not constants of the code.
const (
	ErrorResolution  Type = "error-resolution"
	TaskCompletion   Type = "task-completion"
	UserCheckpoint   Type = "user-checkpoint"
	FeatureMilestone Type = "feature-milestone"
)

// Types lists the anchor types in a fixed order (used for per-type rows).
var Types = []Type{ErrorResolution, TaskCompletion, UserCheckpoint, FeatureMilestone}

// ParseType returns the Type named s.
func ParseType(s string) (Type, bool) {
	for _, t := range Types {
		if string(t) == s {
			return t, true
		}
	}
	return "", false
}

// RuleSet is a named, ordered list of rules with a confidence threshold and
// an optional synthetic-anchor fallback. It is immutable once parsed and safe
// for concurrent use.
type RuleSet struct {
	// Name identifies the set in tables and flags ("codelet").
	Name        string
	Description string
	// Threshold is the confidence a rule needs to fire (BR-001).
	Threshold float64
	// Synthetic is the fallback anchor added at the last turn when no rule
	// fires on any turn (BR-004); nil means no fallback.
	Synthetic *SyntheticSpec
	// Rules are tried in order on each turn; the first that fires wins.
	Rules []*Rule
	// Origin says where the set came from: "builtin:codelet" or a file path.
	Origin string
	// Source is the YAML text the set was parsed from.
	Source []byte

	once sync.Once
	prog *program
}

// SyntheticSpec describes the synthetic anchor of a rule set.
type SyntheticSpec struct {
	Type        Type
	Weight      float64
	Confidence  float64
	Description string
}

// Rule is one detection rule.
type Rule struct {
	Name        string
	Type        Type
	Weight      float64
	Confidence  float64
	Description string
	// When are the rule's conditions; all must hold.
	When []*Cond
	// Line is the rule's line in its YAML source.
	Line int
}

// BelowThreshold reports whether the rule can never fire in set s because its
// confidence is under the set's threshold.
func (r *Rule) BelowThreshold(s *RuleSet) bool { return r.Confidence < s.Threshold }

// Hash is a short hash of the set's YAML source.
func (s *RuleSet) Hash() string {
	sum := sha256.Sum256(s.Source)
	return hex.EncodeToString(sum[:8])
}

// MarshalJSON identifies the set by name, origin and source hash (it is part
// of the analysis configuration hashed into summary.json).
func (s *RuleSet) MarshalJSON() ([]byte, error) {
	return json.Marshal(struct {
		Name   string `json:"name"`
		Origin string `json:"origin"`
		Hash   string `json:"hash"`
	}{s.Name, s.Origin, s.Hash()})
}

// CondKind is the kind of a turn condition.
type CondKind uint8

// Condition kinds, named as in the YAML.
const (
	CondAll CondKind = iota
	CondAny
	CondNot
	CondPreviousError
	CondCall
	CondResult
	CondUser
	CondResponse
	CondNextUser
	CondChanged
	CondGit
	CondFailThenPass
	CondChecked
	CondFixedInTurn
	CondPassesAgain
	CondExercised
)

var condNames = [...]string{"all", "any", "not", "previous_error", "call", "result", "user", "response",
	"next_user", "changed", "git", "fail_then_pass", "checked", "fixed_in_turn", "passes_again", "exercised"}

// String returns the kind's YAML key.
func (k CondKind) String() string { return condNames[k] }

// Cond is a condition over one turn.
type Cond struct {
	Kind CondKind
	// Kids are the operands of all, any (one or more) and not (exactly one).
	Kids []*Cond
	// Bool is the value previous_error, changed, checked, fail_then_pass,
	// fixed_in_turn, passes_again and exercised must have.
	Bool bool
	// Git are the milestone kinds of CondGit (any one must show).
	Git []string
	// Call is set for CondCall.
	Call *CallTest
	// Result is set for CondResult.
	Result *ResultTest
	// Text is the matcher of CondUser, CondResponse and CondNextUser.
	Text *Text
}

// CallTest holds when some tool call of the turn satisfies every field set.
type CallTest struct {
	// Tools are tool names (exact, case-sensitive; "prefix*" matches a
	// prefix); empty means any tool.
	Tools   []string
	Command *Text
	Path    *Text
	// Input is matched against the call's input JSON text.
	Input *Text
	// Min is how many calls must match (default 1).
	Min int
}

// ResultTest holds when some tool result of the turn satisfies every field
// set.
type ResultTest struct {
	// Tools are the names of the tools whose results qualify (as CallTest).
	Tools []string
	// Success, when set, is the success value the result must have.
	Success *bool
	// Last restricts the test to the turn's last tool result.
	Last bool
	// Output is matched against the result's text.
	Output *Text
	// Command is matched against the command of the call the result answers.
	Command *Text
	// Min is how many results must match (default 1).
	Min int
}

// TextOp is the operator of a text matcher.
type TextOp uint8

// Text matcher operators, named as in the YAML.
const (
	TextContains TextOp = iota
	TextRegex
	TextLongerThan
	TextShorterThan
	TextAll
	TextAny
	TextNot
	TextSays
)

var textOpNames = [...]string{"contains", "regex", "longer_than", "shorter_than", "all", "any", "not", "says"}

// String returns the operator's YAML key.
func (o TextOp) String() string { return textOpNames[o] }

// Text is a matcher over one text.
type Text struct {
	Op TextOp
	// Needles are the strings of contains: any one of them must occur.
	Needles []string
	// Pattern is the regex of TextRegex (RE2 syntax).
	Pattern string
	// Fold makes contains and regex case-insensitive.
	Fold bool
	// N is the byte length of longer_than / shorter_than.
	N int
	// Kids are the operands of all, any and not.
	Kids []*Text
	// Lexicons are the lexicons of says (any one must be said).
	Lexicons []string

	re *regexp.Regexp
}
