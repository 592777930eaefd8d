package loader

import (
	"fmt"
	"sort"
	"strings"
	"testing"

	"github.com/compactbench/compactbench/internal/transcript"
)

// TestClaudeCodeClasses writes one record of every type, system subtype
// and attachment type of the classification table after a prompt and
// checks that each class does what it says: context becomes a message (or
// an injected block), bookkeeping is set aside under its name and counted,
// a fact becomes a compaction event; and that none of them is unknown.
func TestClaudeCodeClasses(t *testing.T) {
	const head = `{"type":"user","uuid":"p","parentUuid":null,"sessionId":"s","message":{"role":"user","content":"go"}}` + "\n"
	rec := func(body string) string { return head + body + "\n" }
	type tc struct {
		name, input string
		class       recordClass
		ignoredAs   string
	}
	var cases []tc
	for _, typ := range sortedKeys(ccTypes) {
		switch typ {
		case "user", "assistant", "system", "attachment":
			continue // by subtype below, or the message records themselves
		}
		cases = append(cases, tc{"type " + typ, rec(fmt.Sprintf(`{"type":%q,"uuid":"x","parentUuid":"p","sessionId":"s"}`, typ)), ccTypes[typ], typ})
	}
	for _, sub := range sortedKeys(ccSystemSubtypes) {
		body := fmt.Sprintf(`{"type":"system","subtype":%q,"uuid":"x","parentUuid":"p","sessionId":"s","content":"c"}`, sub)
		if ccSystemSubtypes[sub] == classFact {
			meta := "compactMetadata"
			if sub == "microcompact_boundary" {
				meta = "microcompactMetadata"
			}
			body = fmt.Sprintf(`{"type":"system","subtype":%q,"uuid":"x","parentUuid":null,"logicalParentUuid":"p","sessionId":"s",%q:{"trigger":"auto","preTokens":9,"postTokens":3}}`, sub, meta) +
				"\n" + `{"type":"user","uuid":"z","parentUuid":"x","sessionId":"s","message":{"role":"user","content":"after"}}`
		}
		cases = append(cases, tc{"system " + sub, rec(body), ccSystemSubtypes[sub], "system:" + sub})
	}
	for _, kind := range sortedKeys(ccAttachments) {
		body := fmt.Sprintf(`{"type":"attachment","uuid":"x","parentUuid":"p","sessionId":"s","attachment":{"type":%q,"content":"text of %s"}}`, kind, kind)
		cases = append(cases, tc{"attachment " + kind, rec(body), ccAttachments[kind], "attachment:" + kind})
	}
	cases = append(cases,
		tc{"user", rec(`{"type":"user","uuid":"x","parentUuid":"p","sessionId":"s","message":{"role":"user","content":"more"}}`), classContext, ""},
		tc{"assistant", rec(`{"type":"assistant","uuid":"x","parentUuid":"p","sessionId":"s","message":{"id":"m","role":"assistant","model":"claude-opus-5","content":[{"type":"text","text":"ok"}],"usage":{"input_tokens":1}}}`), classContext, ""})
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			tr := readString(t, "s.jsonl", c.input, ClaudeCodeFormat)[0]
			if tr.Stats.UnknownTypes != 0 || tr.Stats.UnknownKeys != 0 || len(tr.Problems) != 0 {
				t.Fatalf("unknown types %d keys %d problems %v", tr.Stats.UnknownTypes, tr.Stats.UnknownKeys, tr.Problems)
			}
			switch c.class {
			case classContext:
				if len(tr.Messages) != 2 {
					t.Errorf("%d messages, want the prompt and this record", len(tr.Messages))
				}
				if strings.HasPrefix(c.name, "attachment") && (tr.Messages[1].Blocks[0].Kind != transcript.BlockInjected || !tr.Messages[1].IsMeta) {
					t.Errorf("attachment read as %+v, want an injected block", tr.Messages[1])
				}
			case classBookkeeping:
				if len(tr.Messages) != 1 || tr.Stats.IgnoredByType[c.ignoredAs] != 1 {
					t.Errorf("%d messages, ignored %v; want 1 and %s=1", len(tr.Messages), tr.Stats.IgnoredByType, c.ignoredAs)
				}
			case classFact:
				if len(tr.Compactions) != 1 || tr.Compactions[0].PreTokens != 9 {
					t.Errorf("compactions %+v, want one with its preTokens", tr.Compactions)
				}
				if c.name == "system compact_boundary" && tr.Compactions[0].PostTokens != 3 {
					t.Errorf("postTokens = %d, want 3", tr.Compactions[0].PostTokens)
				}
			default:
				t.Fatalf("class %d", c.class)
			}
		})
	}
	// An unknown subtype and attachment type are counted and reported.
	tr := readString(t, "s.jsonl", rec(`{"type":"system","subtype":"brand_new","uuid":"x","parentUuid":"p","sessionId":"s"}`)+
		`{"type":"attachment","uuid":"y","parentUuid":"x","sessionId":"s","attachment":{"type":"brand_new_kind"}}`+"\n", ClaudeCodeFormat)[0]
	if tr.Stats.UnknownTypes != 2 || len(tr.Problems) != 2 {
		t.Errorf("unknown types %d problems %v, want 2 and 2", tr.Stats.UnknownTypes, tr.Problems)
	}
}

func sortedKeys(m map[string]recordClass) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
