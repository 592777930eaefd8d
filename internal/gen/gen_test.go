package gen

import (
	"bytes"
	"encoding/json"
	"io"
	"sort"
	"strings"
	"testing"

	"github.com/compactbench/compactbench/internal/loader"
	"github.com/compactbench/compactbench/internal/transcript"
)

// memFiles collects generated files in memory.
type memFiles map[string]*bytes.Buffer

func (m memFiles) create(path string) (io.Writer, error) {
	b := &bytes.Buffer{}
	m[path] = b
	return b, nil
}

func generate(t testing.TB, spec Spec) (*Manifest, memFiles) {
	t.Helper()
	files := memFiles{}
	m, err := Generate(spec, files.create)
	if err != nil {
		t.Fatalf("Generate(%+v): %v", spec, err)
	}
	return m, files
}

// read loads one generated file with the project's Claude Code reader.
func read(t testing.TB, path string, data []byte) *transcript.Transcript {
	t.Helper()
	f, err := loader.Lookup(loader.ClaudeCodeFormat)
	if err != nil {
		t.Fatal(err)
	}
	var got []*transcript.Transcript
	err = f.Read(&loader.Source{Path: path, R: bytes.NewReader(data)}, func(tr *transcript.Transcript) error {
		got = append(got, tr)
		return nil
	})
	if err != nil || len(got) != 1 {
		t.Fatalf("%s: read: %v (%d transcripts)", path, err, len(got))
	}
	return got[0]
}

// specs are sessions of every scenario, enough to meet every branch.
func specs(perScenario int) []Spec {
	var out []Spec
	for i := 0; i < perScenario*len(Scenarios); i++ {
		out = append(out, SpecAt(7, Scenarios, i))
	}
	return out
}

// TestLoaderAgrees reads every generated file with the real reader: no
// problems, and every count equals what the generator says it wrote.
func TestLoaderAgrees(t *testing.T) {
	compactions := 0
	kinds := map[string]int{}
	for _, spec := range specs(12) {
		m, files := generate(t, spec)
		if len(files) != len(m.Files) {
			t.Errorf("%+v: %d files written, manifest lists %d", spec, len(files), len(m.Files))
		}
		for _, e := range m.Files {
			data := files[e.Path].Bytes()
			if int64(len(data)) != e.Bytes {
				t.Errorf("%s: %d bytes written, manifest says %d", e.Path, len(data), e.Bytes)
			}
			tr := read(t, e.Path, data)
			for _, p := range tr.Problems {
				t.Errorf("%s:%d: %s", e.Path, p.Line, p.Reason)
			}
			s := &tr.Stats
			got := Expect{Path: tr.Path, ID: tr.ID, SessionID: tr.SessionID, ParentID: tr.ParentID, Kind: string(tr.Kind), Model: tr.Model,
				Bytes: e.Bytes, Lines: int64(s.Lines), IgnoredLines: int64(s.IgnoredLines), Messages: int64(len(tr.Messages)),
				Turns: int64(len(tr.Turns())), APICalls: int64(s.APICalls), ToolCalls: int64(s.ToolCalls), ToolErrors: int64(s.ToolErrors),
				CompactBoundaries: int64(s.CompactBoundaries), PeakContext: s.PeakContextReal}
			if got != e {
				t.Errorf("%s (%+v):\nreader    %+v\ngenerator %+v", e.Path, spec, got, e)
			}
			kinds[e.Kind]++
			compactions += int(e.CompactBoundaries)
		}
	}
	// The sample must exercise what the reader is checked on.
	if compactions == 0 || kinds["subagent"] == 0 || kinds["compaction-call"] == 0 {
		t.Errorf("sample too narrow: %d compactions, kinds %v", compactions, kinds)
	}
}

// TestUsageModel checks the documented usage model on what the reader sees:
// each call's context is the previous one plus its output plus the tokens of
// what came in between; cache reads are the previous prefix (or only the
// system prompt after a pause or a compaction); preTokens is the context at
// the boundary.
func TestUsageModel(t *testing.T) {
	checked := 0
	for _, spec := range specs(6) {
		m, files := generate(t, spec)
		for _, e := range m.Files {
			if e.Kind == "compaction-call" {
				continue
			}
			tr := read(t, e.Path, files[e.Path].Bytes())
			system := int64(SystemTokens)
			if e.Kind == "subagent" {
				system = SubagentSystemTokens
			}
			ctx := system // the context the next call sends, by the model
			var prev *transcript.Usage
			ci := 0 // next compaction
			for i := range tr.Messages {
				for ci < len(tr.Compactions) && tr.Compactions[ci].MessageIndex == i {
					c := tr.Compactions[ci]
					if c.PreTokens != ctx {
						t.Errorf("%s: compaction preTokens %d, model says %d", e.Path, c.PreTokens, ctx)
					}
					ctx = system + MessageTokens + proseTokens(len(c.Summary))
					prev = nil
					ci++
				}
				msg := &tr.Messages[i]
				if msg.Role != transcript.RoleAssistant {
					ctx += messageTokens(msg)
					continue
				}
				u := msg.Usage
				if u.Context() != ctx {
					t.Fatalf("%s line %d: call context %d, model says %d", e.Path, msg.Line, u.Context(), ctx)
				}
				switch {
				case prev != nil && u.CacheRead == prev.Context()-prev.Input:
				case u.CacheRead == system && (prev == nil || prev.Context()-prev.Input > system):
				case u.CacheRead == 0 && e.Kind == "subagent" && prev == nil:
				default:
					t.Errorf("%s line %d: cache_read %d, previous prefix %v", e.Path, msg.Line, u.CacheRead, prev)
				}
				if out := messageTokens(msg) - MessageTokens; u.Output != out {
					t.Errorf("%s line %d: output %d, blocks make %d", e.Path, msg.Line, u.Output, out)
				}
				ctx += u.Output
				prev = u
				checked++
			}
		}
	}
	if checked < 500 {
		t.Errorf("only %d calls checked", checked)
	}
}

// messageTokens is the model's token count of a message as the reader
// returns it (MessageTokens included).
func messageTokens(m *transcript.Message) int64 {
	n := int64(MessageTokens)
	for _, b := range m.Blocks {
		switch b.Kind {
		case transcript.BlockText:
			if m.Role == transcript.RoleAssistant || len(m.Blocks) > 1 || m.IsMeta {
				n += BlockTokens
			}
			n += proseTokens(len(b.Text))
		case transcript.BlockThinking:
			if b.Text == "" {
				n += BlockTokens + ceilDiv(b.SignatureLen, SignatureChars)
			} else {
				n += BlockTokens + proseTokens(len(b.Text))
			}
		case transcript.BlockToolUse:
			n += ToolUseTokens + codeTokens(len(b.Input))
		case transcript.BlockToolResult:
			n += ToolResultTokens + codeTokens(len(b.Text))
		}
	}
	return n
}

// TestDeterministic: the same spec gives the same bytes, and a different
// seed gives different ones.
func TestDeterministic(t *testing.T) {
	for _, spec := range specs(2) {
		m1, f1 := generate(t, spec)
		m2, f2 := generate(t, spec)
		if !equalManifests(m1, m2) {
			t.Errorf("%+v: manifests differ", spec)
		}
		for path, b := range f1 {
			if !bytes.Equal(b.Bytes(), f2[path].Bytes()) {
				t.Errorf("%s: bytes differ between two runs", path)
			}
		}
		other := spec
		other.Seed++
		m3, _ := generate(t, other)
		if m3.SessionID == m1.SessionID {
			t.Errorf("%+v: seed does not change the session", spec)
		}
	}
}

func equalManifests(a, b *Manifest) bool {
	ja, _ := json.Marshal(a)
	jb, _ := json.Marshal(b)
	return bytes.Equal(ja, jb)
}

// TestLabels checks the labels against the sessions they describe: turns
// exist, one label per turn, types are known, every scenario that promises
// anchors has them and no-anchor sessions have none.
func TestLabels(t *testing.T) {
	types := map[string]map[string]int{}
	for _, spec := range specs(10) {
		m, files := generate(t, spec)
		main := m.Files[0]
		tr := read(t, main.Path, files[main.Path].Bytes())
		turns := tr.Turns()
		seen := map[int]bool{}
		for _, l := range m.Labels {
			if l.Transcript != main.Path {
				t.Errorf("%+v: label names %q, not the session file", spec, l.Transcript)
			}
			if types[spec.Scenario] == nil {
				types[spec.Scenario] = map[string]int{}
			}
			types[spec.Scenario][l.Type]++
			if l.Type == NoAnchors {
				if l.Turn != -1 || len(m.Labels) != 1 {
					t.Errorf("%+v: a none label must be alone at turn -1: %+v", spec, m.Labels)
				}
				continue
			}
			if weight[l.Type] == 0 {
				t.Errorf("%+v: unknown label type %q", spec, l.Type)
			}
			if l.Turn < 0 || l.Turn >= len(turns) || seen[l.Turn] {
				t.Errorf("%+v: label turn %d (of %d turns, seen %v)", spec, l.Turn, len(turns), seen[l.Turn])
				continue
			}
			seen[l.Turn] = true
			turn := turns[l.Turn]
			switch l.Type {
			case UserCheckpoint:
				if !hasLead(turn.UserMessage) {
					t.Errorf("%+v turn %d: user-checkpoint on a prompt without a change of direction: %q", spec, l.Turn, clip(turn.UserMessage, 80))
				}
			case ErrorResolution, TaskCompletion, FeatureMilestone:
				// A completion is verified in its turn: the last command run
				// succeeded (research turns run none but must get results).
				ok, lastBash := false, true
				for _, res := range turn.ToolResults {
					ok = ok || res.Success
					if res.Name == "Bash" {
						lastBash = res.Success
					}
				}
				if !ok || !lastBash {
					t.Errorf("%+v turn %d: %s in a turn whose last command failed", spec, l.Turn, l.Type)
				}
			}
		}
	}
	want := map[string][]string{
		Bugfix: {ErrorResolution}, Feature: {TaskCompletion}, Research: {TaskCompletion}, Setup: {TaskCompletion, ErrorResolution},
		QA: {UserCheckpoint, NoAnchors}, Mixed: {UserCheckpoint, ErrorResolution, TaskCompletion}, NoAnchor: {NoAnchors},
	}
	for sc, ts := range want {
		for _, typ := range ts {
			if types[sc][typ] == 0 {
				t.Errorf("scenario %s: no %s label in the sample (%v)", sc, typ, types[sc])
			}
		}
	}
	if n := len(types[NoAnchor]); n != 1 {
		t.Errorf("no-anchor sessions carry labels: %v", types[NoAnchor])
	}
}

// hasLead reports whether a prompt opens with a change of direction.
func hasLead(prompt string) bool {
	for _, l := range append(append([]string{}, directionLeads...), switchLeads...) {
		if strings.HasPrefix(prompt, l) {
			return true
		}
	}
	return false
}

// TestScenarioNames guards the list that --scenarios and directories use.
func TestScenarioNames(t *testing.T) {
	got := append([]string{}, Scenarios...)
	sort.Strings(got)
	var keys []string
	for k := range scenarioFuncs {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	if strings.Join(got, ",") != strings.Join(keys, ",") {
		t.Errorf("Scenarios %v, implemented %v", got, keys)
	}
	if _, err := Generate(Spec{Scenario: "nope"}, memFiles{}.create); err == nil {
		t.Error("unknown scenario accepted")
	}
}
