// Package gen makes synthetic Claude Code sessions with gold anchor labels.
//
// Each session is a scenario an agent really goes through (a bug fix, a
// feature across files, web research, project setup, plain Q&A, a long
// session with changes of direction, a session that never gets anywhere),
// played out on a made-up project and written the way Claude Code writes its
// files: one content block per line sharing message.id, parentUuid chains
// with parallel tool calls, hook and bash progress records, usage as a
// running snapshot, cache reads growing call after call, compact_boundary
// plus summary when the context fills up, and subagent files. Two file shapes
// are produced, after versions 2.1.39 and 2.0.76 (see profile).
//
// The labels come from the scenario's own events — the bug was fixed and the
// fix verified, the feature part was finished and checked, the user changed
// direction — never from running a rule set. The policy is written out in
// corpora/README.md and at the top of scenarios.go.
//
// Generation is deterministic: a session depends only on (seed, index,
// scenario), so sessions can be made in parallel and in any order. The
// usage numbers follow the model documented in tokens.go. The package does
// no file I/O: Generate writes through the writers its caller creates.
package gen

import (
	"fmt"
	"io"
)

// Scenario names, as --scenarios takes them and as directories of a corpus.
const (
	Bugfix   = "bugfix"
	Feature  = "feature"
	Research = "research"
	Setup    = "setup"
	QA       = "qa"
	Mixed    = "mixed"
	NoAnchor = "no-anchor"
)

// Scenarios lists every scenario in the order a corpus cycles through them.
var Scenarios = []string{Bugfix, Feature, Research, Setup, QA, Mixed, NoAnchor}

// Anchor types of the label format.
const (
	ErrorResolution  = "error-resolution"
	TaskCompletion   = "task-completion"
	UserCheckpoint   = "user-checkpoint"
	FeatureMilestone = "feature-milestone"
	// NoAnchors is the type of the line that says a transcript has none.
	NoAnchors = "none"
)

// Label is one line of a label file (the shared label format).
type Label struct {
	// Transcript is the file's path relative to the label file's directory.
	Transcript string `json:"transcript"`
	// Turn is the 0-based turn index; -1 with Type "none".
	Turn int    `json:"turn"`
	Type string `json:"type"`
	Note string `json:"note,omitempty"`
}

// Spec identifies one session of a corpus.
type Spec struct {
	Seed     uint64
	Index    int
	Scenario string
}

// SpecAt is session index of a corpus that cycles through scenarios.
func SpecAt(seed uint64, scenarios []string, index int) Spec {
	return Spec{Seed: seed, Index: index, Scenario: scenarios[index%len(scenarios)]}
}

// Expect is what the generator wrote into one file, counted the way the
// transcripts table counts it, so a reader can be checked against it.
type Expect struct {
	Path      string // relative to the output directory, slash-separated
	ID        string // transcript id: session id, or "agent-<id>"
	SessionID string
	ParentID  string
	Kind      string // session, subagent, compaction-call
	Model     string
	Bytes     int64

	Lines, IgnoredLines, Messages, Turns int64
	APICalls, ToolCalls, ToolErrors      int64
	CompactBoundaries                    int64
	PeakContext                          int64
}

// Manifest describes one generated session.
type Manifest struct {
	Spec
	SessionID string
	Version   string // Claude Code version the files imitate
	// Files are the session file first, then its subagent and compaction
	// files in the order they were written.
	Files []Expect
	// Labels are the session's gold anchors in turn order; a session without
	// anchors has one label of type "none".
	Labels []Label
}

// Bytes is the size of every file of the session.
func (m *Manifest) Bytes() int64 {
	var n int64
	for _, f := range m.Files {
		n += f.Bytes
	}
	return n
}

// scenarioFuncs play a scenario; lead is a direction-change opening for the
// first prompt ("" when the scenario opens the session).
var scenarioFuncs = map[string]func(s *sess, lead string){
	Bugfix:   bugfix,
	Feature:  feature,
	Research: research,
	Setup:    setup,
	QA:       qa,
	Mixed:    mixed,
	NoAnchor: noAnchor,
}

// Generate writes the session spec names. create opens an output file by
// its path relative to the corpus directory ("bugfix/<id>.jsonl", and
// "bugfix/<id>/subagents/agent-<x>.jsonl" for subagents); a writer that is
// also an io.Closer is closed when its file is complete.
func Generate(spec Spec, create func(path string) (io.Writer, error)) (*Manifest, error) {
	play, ok := scenarioFuncs[spec.Scenario]
	if !ok {
		return nil, fmt.Errorf("unknown scenario %q (known: %v)", spec.Scenario, Scenarios)
	}
	r := newRand(spec.Seed, spec.Index, 0)
	s := &sess{rng: r, create: create, dir: spec.Scenario, turn: -1}
	s.prof = profiles[0]
	if chance(r, 0.3) {
		s.prof = profiles[1]
	}
	s.proj = newProject(r)
	s.id = newUUID(r)
	s.slug = pick(r, slugWords) + "-" + pick(r, slugWords) + "-" + pick(r, slugNames)
	s.clock = startMillis(spec.Seed, spec.Index)
	if s.prof.hooks && chance(r, 0.8) {
		s.preHooks = pickN(r, preHookCmds, between(r, 1, len(preHookCmds)))
		s.postHooks = pickN(r, postHookCmds, between(r, 1, len(postHookCmds)))
	}
	main, err := s.newFile(s.dir+"/"+s.id+".jsonl", false, "", s.prof.mainModel)
	if err != nil {
		return nil, err
	}
	s.main, s.cur = main, main
	s.begin()
	play(s, "")
	s.closeFile(main)
	if s.err != nil {
		return nil, s.err
	}

	m := &Manifest{Spec: spec, SessionID: s.id, Version: s.prof.version, Labels: s.labels}
	m.Files = append(m.Files, main.exp)
	for _, f := range s.files {
		if f != main {
			m.Files = append(m.Files, f.exp)
		}
	}
	if len(m.Labels) == 0 {
		m.Labels = []Label{{Transcript: main.exp.Path, Turn: -1, Type: NoAnchors, Note: "no natural anchor in this session"}}
	}
	return m, nil
}

// begin writes what precedes the first prompt: a title record in older
// files, SessionStart hook progress in newer ones.
func (s *sess) begin() {
	f := s.main
	if !s.prof.hooks && chance(s.rng, 0.4) {
		f.title(capitalize(pick(s.rng, verbs)) + " " + pick(s.rng, modules) + " " + pick(s.rng, nouns))
	}
	if len(s.preHooks) > 0 {
		f.sessionStart("startup")
	}
	s.tick(2_000, 60_000)
}

var (
	slugWords    = []string{"quiet", "brisk", "amber", "lucky", "gentle", "swift", "hidden", "frosty", "velvet", "sunny", "modular", "curious"}
	slugNames    = []string{"turing", "hopper", "lovelace", "knuth", "ritchie", "liskov", "dijkstra", "hamilton", "perlman", "thompson"}
	preHookCmds  = []string{"~/.claude/hooks/guard.sh", "npx --yes block-secrets", "${CLAUDE_PLUGIN_ROOT}/scripts/pre-tool.sh", "~/.claude/hooks/log-tool.sh"}
	postHookCmds = []string{"~/.claude/hooks/format-changed.sh", "${CLAUDE_PLUGIN_ROOT}/scripts/post-tool.sh", "~/.claude/hooks/notify.sh"}
)
