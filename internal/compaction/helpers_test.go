package compaction

import (
	"fmt"
	"strings"
	"testing"

	"github.com/compactbench/compactbench/internal/tokens"
	"github.com/compactbench/compactbench/internal/transcript"
)

// builder writes transcripts by hand for tests.
type builder struct {
	msgs []transcript.Message
	n    int
}

func (b *builder) stamp() string {
	b.n++
	return fmt.Sprintf("2026-01-01T00:%02d:%02dZ", b.n/60, b.n%60)
}

func (b *builder) user(text string) *builder {
	b.msgs = append(b.msgs, transcript.Message{Role: transcript.RoleUser, Timestamp: b.stamp(),
		Blocks: []transcript.Block{{Kind: transcript.BlockText, Text: text}}})
	return b
}

// say adds an assistant API call with text and tool calls ("Name:id:path|cmd").
func (b *builder) say(text string, calls ...string) *builder {
	m := transcript.Message{Role: transcript.RoleAssistant, Timestamp: b.stamp(), Model: "claude-test",
		ID: fmt.Sprintf("msg_%d", b.n), Usage: &transcript.Usage{Output: 10}}
	if text != "" {
		m.Blocks = append(m.Blocks, transcript.Block{Kind: transcript.BlockText, Text: text})
	}
	for _, c := range calls {
		parts := strings.SplitN(c, ":", 3)
		bl := transcript.Block{Kind: transcript.BlockToolUse, ToolName: parts[0], ToolID: parts[1]}
		if len(parts) == 3 {
			if parts[0] == "Bash" {
				bl.Command = parts[2]
				bl.Input = fmt.Sprintf(`{"command":%q}`, parts[2])
			} else {
				bl.Path = parts[2]
				bl.Input = fmt.Sprintf(`{"file_path":%q}`, parts[2])
			}
		}
		m.Blocks = append(m.Blocks, bl)
	}
	b.msgs = append(b.msgs, m)
	return b
}

func (b *builder) result(id string, failed bool, text string) *builder {
	b.msgs = append(b.msgs, transcript.Message{Role: transcript.RoleTool, Timestamp: b.stamp(),
		Blocks: []transcript.Block{{Kind: transcript.BlockToolResult, ToolID: id, IsError: failed, Text: text}}})
	return b
}

func (b *builder) transcript() *transcript.Transcript {
	return &transcript.Transcript{ID: "t", Path: "t.jsonl", Model: "claude-test", Messages: b.msgs}
}

func ruler(t testing.TB, name string) Ruler {
	t.Helper()
	r, err := tokens.ByName(name)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func rulers(name string) (Ruler, error) {
	r, err := tokens.ByName(name)
	if err != nil {
		return nil, err
	}
	return r, nil
}

// options returns replay options with the chars4 metric (easy to count by
// hand) and the given window.
func options(t testing.TB, window int) *Options {
	return &Options{Window: window, Metric: ruler(t, "chars4"), Rulers: rulers}
}

// newStrategy builds a strategy with default parameters changed by set.
func newStrategy[P any](t testing.TB, id string, set func(p *P)) Strategy {
	t.Helper()
	spec, err := SpecByID(id)
	if err != nil {
		t.Fatal(err)
	}
	p := spec.Params().(*P)
	if set != nil {
		set(p)
	}
	return spec.New(p)
}

// replay runs a strategy over a transcript with overhead 0.
func replay(t testing.TB, tr *transcript.Transcript, id string, st Strategy, opt *Options) (Run, []Event, *Sim) {
	t.Helper()
	sh := NewShared(tr)
	var last *Sim
	spy := &spyStrategy{Strategy: st, last: &last}
	run, events := Replay(sh, id, spy, opt, 0, 0)
	return run, events, last
}

// spyStrategy remembers the Sim, to look at the final context.
type spyStrategy struct {
	Strategy
	last **Sim
}

func (s *spyStrategy) Trigger(sim *Sim) (bool, int) { *s.last = sim; return s.Strategy.Trigger(sim) }
func (s *spyStrategy) Compact(sim *Sim) Outcome     { *s.last = sim; return s.Strategy.Compact(sim) }

// TriggerRule forwards to the strategy's (TriggerRuler), if it has one.
func (s *spyStrategy) TriggerRule(sim *Sim) (string, int) {
	if tr, ok := s.Strategy.(TriggerRuler); ok {
		return tr.TriggerRule(sim)
	}
	return "measure", 0
}

// shape renders a context as "s" (written), or the recorded index, with m for
// modified: "s 4 5m 6".
func shape(ctx []Item) string {
	var parts []string
	for _, it := range ctx {
		switch {
		case it.Orig < 0:
			parts = append(parts, "s")
		case it.Modified:
			parts = append(parts, fmt.Sprintf("%dm", it.Orig))
		default:
			parts = append(parts, fmt.Sprint(it.Orig))
		}
	}
	return strings.Join(parts, " ")
}

// Every test checks the unchanged prefixes strategies report, and prune's
// incremental trigger against its walk of the context.
func init() { checkSame, checkPrune = true, true }
