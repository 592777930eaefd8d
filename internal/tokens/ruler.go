// Package tokens counts tokens: the rulers every compaction trigger, every
// compression ratio and every cost figure rests on, and the measurement of
// those rulers against the real context sizes a recording's API usage gives.
//
// # Rulers
//
// A Ruler counts a Block, a Message (its blocks plus a per-message framing
// constant) and a context ([]Message). Counts of recorded blocks are cached on
// the block itself (transcript.Block.CachedTokens) in the ruler's slot, so a
// block is counted once per ruler however many strategies replay it. Text a
// strategy writes (a summary) is counted with Ruler.Text, which never caches.
//
// The rulers, by name (ByName):
//
//   - chars4: ceil(chars/4) of each block's text (seed 004 estimateTokens),
//     where chars are UTF-16 code units as JavaScript's String.length counts
//     them. A tool_use block counts its name and JSON input as one text;
//     images and encrypted thinking count 0 (no text).
//   - chars4msg: seed 004 estimateMessagesTokens: 2 per message, text blocks
//     ceil(chars/4), tool calls ceil(name/4)+ceil(JSON input/4), tool results
//     ceil(JSON.stringify(result)/4) (the result text as a JSON string, quotes
//     and escapes included). Thinking, images and anything else count 0, as
//     in the seed's message parts.
//   - o200k, cl100k: exact byte-pair encodings (tiktoken-go/tokenizer, with
//     the vocabularies compiled in) of the same text chars4 counts. Nothing
//     is added for message framing or images. Opt-in: they are ~100× slower.
//   - calibrated: tokens-per-byte factors per content class plus constants
//     per message, tool call, tool parameter and image, fitted on the real
//     usage of recorded sessions (see Factors and Fit). The default metric
//     ruler.
//
// # What a recorded call's context is
//
// See EstimateCalls: the real context of a call (usage.Context()) is compared
// with overhead + ruler(prompt), where the prompt is the conversation as the
// harness sent it (after recorded compactions and microcompactions, without
// thinking the API strips) and the overhead (system prompt and tools, which no
// transcript records) is taken from an anchor call.
//
// The package is pure: no I/O, no flags, no globals that change after init.
package tokens

import (
	"fmt"
	"strings"

	"github.com/compactbench/compactbench/internal/transcript"
)

// counter is what a ruler does; Ruler adds caching and the message and
// context sums around it.
type counter interface {
	// block counts one block of a message.
	block(b *transcript.Block) int
	// message is the framing constant added once per message.
	message() int
}

// Ruler counts tokens the way one tokenizer or heuristic does.
// A Ruler is immutable and safe for concurrent use; the per-block cache it
// writes lives on the blocks, which belong to one goroutine at a time.
type Ruler struct {
	name string
	id   RulerID
	slot int // cache slot on blocks; -1 = never cache
	c    counter
}

// Name is the ruler's registry name (column suffix in the calls table).
func (r *Ruler) Name() string { return r.name }

// ID is the ruler's typed registry key (NoRuler for a ruler built outside
// the registry).
func (r *Ruler) ID() RulerID { return r.id }

// Slot is the block cache slot the ruler uses, or -1.
func (r *Ruler) Slot() int { return r.slot }

// Uncached returns a copy of the ruler that never reads or writes block
// caches (to compare two parameterisations of one ruler on the same blocks).
func (r *Ruler) Uncached() *Ruler {
	c := *r
	c.slot = -1
	return &c
}

// Block returns the tokens of one block, counting it on first use and caching
// the count on the block.
func (r *Ruler) Block(b *transcript.Block) int {
	if r.slot < 0 {
		return r.c.block(b)
	}
	if n, ok := b.CachedTokens(r.slot); ok {
		return n
	}
	n := r.c.block(b)
	b.SetCachedTokens(r.slot, n)
	return n
}

// Message returns the tokens of a message: its framing constant plus its
// blocks.
func (r *Ruler) Message(m *transcript.Message) int {
	n := r.c.message()
	for i := range m.Blocks {
		n += r.Block(&m.Blocks[i])
	}
	return n
}

// Context returns the tokens of a list of messages, as they stand: callers
// that replay a recorded prompt use EstimateCalls, which also applies the
// API's visibility rules (thinking stripping, microcompaction).
func (r *Ruler) Context(msgs []transcript.Message) int {
	n := 0
	for i := range msgs {
		n += r.Message(&msgs[i])
	}
	return n
}

// Text returns the tokens of a fresh text block (for example a summary a
// strategy just wrote), without caching. Add MessageOverhead when the text is
// a message of its own.
func (r *Ruler) Text(s string) int {
	b := transcript.Block{Kind: transcript.BlockText, Text: s}
	return r.c.block(&b)
}

// MessageOverhead is the framing constant the ruler adds per message.
func (r *Ruler) MessageOverhead() int { return r.c.message() }

// Cache slots of the registered rulers. A block caches one count per slot, so
// two rulers that may count the same blocks must not share a slot.
const (
	slotChars4 = iota
	slotChars4Msg
	slotO200k
	slotCl100k
	slotCalibrated
)

// Ruler names.
const (
	Chars4     = "chars4"
	Chars4Msg  = "chars4msg"
	O200k      = "o200k"
	Cl100k     = "cl100k"
	Calibrated = "calibrated"
)

// RulerID is a registered ruler as a typed key: its place in Names(), which
// is also the calls table's column order. Code below the command line
// selects rulers and their columns by RulerID, never by name.
type RulerID int

// The registered rulers, in Names() order.
const (
	RulerChars4 RulerID = iota
	RulerChars4Msg
	RulerO200k
	RulerCl100k
	RulerCalibrated
	// NumRulers is the number of registered rulers.
	NumRulers int = iota
	// NoRuler is the ID of a ruler built outside the registry.
	NoRuler RulerID = -1
)

// Name is the ruler's registry name.
func (id RulerID) Name() string {
	if id < 0 || int(id) >= NumRulers {
		return ""
	}
	return Names()[id]
}

// ParseRuler returns the ID of a registered ruler's name.
func ParseRuler(name string) (RulerID, error) {
	switch name {
	case Chars4:
		return RulerChars4, nil
	case Chars4Msg:
		return RulerChars4Msg, nil
	case O200k:
		return RulerO200k, nil
	case Cl100k:
		return RulerCl100k, nil
	case Calibrated:
		return RulerCalibrated, nil
	}
	return NoRuler, fmt.Errorf("unknown ruler %q (known: %s)", name, strings.Join(Names(), ", "))
}

// Names lists every registered ruler, in the order of the calls table's
// columns.
func Names() []string { return []string{Chars4, Chars4Msg, O200k, Cl100k, Calibrated} }

// DefaultNames are the rulers a run computes unless told otherwise: the cheap
// ones. The BPE rulers are opt-in (--rulers all).
func DefaultNames() []string { return []string{Chars4, Chars4Msg, Calibrated} }

// ByName returns a registered ruler; "calibrated" uses the shipped default
// factors (NewCalibrated for others).
func ByName(name string) (*Ruler, error) {
	id, err := ParseRuler(name)
	if err != nil {
		return nil, err
	}
	return ByID(id, DefaultFactors()), nil
}

// ByID returns a registered ruler; the calibrated one counts with factors
// f. It returns nil for an ID outside the registry.
func ByID(id RulerID, f *Factors) *Ruler {
	switch id {
	case RulerChars4:
		return &Ruler{name: Chars4, id: id, slot: slotChars4, c: chars4{}}
	case RulerChars4Msg:
		return &Ruler{name: Chars4Msg, id: id, slot: slotChars4Msg, c: chars4msg{}}
	case RulerO200k:
		return &Ruler{name: O200k, id: id, slot: slotO200k, c: o200kCounter}
	case RulerCl100k:
		return &Ruler{name: Cl100k, id: id, slot: slotCl100k, c: cl100kCounter}
	case RulerCalibrated:
		return NewCalibrated(f)
	}
	return nil
}

// ParseNames reads a comma-separated ruler list; "all" means every ruler and
// "default" the default set. The result follows Names() order, without
// duplicates.
func ParseNames(s string) ([]string, error) {
	want := map[string]bool{}
	for _, n := range strings.Split(s, ",") {
		n = strings.TrimSpace(n)
		switch n {
		case "":
		case "all":
			for _, x := range Names() {
				want[x] = true
			}
		case "default":
			for _, x := range DefaultNames() {
				want[x] = true
			}
		default:
			if _, err := ByName(n); err != nil {
				return nil, err
			}
			want[n] = true
		}
	}
	var out []string
	for _, n := range Names() {
		if want[n] {
			out = append(out, n)
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no ruler named in %q", s)
	}
	return out, nil
}

// ParseIDs reads a ruler list as ParseNames does, into IDs.
func ParseIDs(s string) ([]RulerID, error) {
	names, err := ParseNames(s)
	if err != nil {
		return nil, err
	}
	out := make([]RulerID, len(names))
	for i, n := range names {
		out[i], _ = ParseRuler(n) // ParseNames accepted it
	}
	return out, nil
}
