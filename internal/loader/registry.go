// Package loader turns files into transcripts: it finds input files, opens
// them (plain, gzip or zstd), detects their format through a small registry of
// readers, and reads them with bounded parallelism, emitting results in a
// deterministic order.
//
// A reader never fails a run because of bad content: every record is
// parsed, ignored by record type (and counted), or bad (reported as a
// transcript.Problem with its line number and reason), so that
// Stats.Lines = ParsedLines + IgnoredLines + BadLines, each counted where the
// reader decides it. A record is the unit a format is read in:
//
//	claude-code, codex   a line of the JSON lines file (blank ones are
//	                     ignored as "(blank)")
//	claude-ai            a chat message (an element of chat_messages)
//	chatgpt              a node of a conversation's mapping tree
//	openai-chat          a message of a row's list, or a row that is a
//	                     single message
//	swe-agent            a history entry (a trajectory step when the file
//	                     has no history)
//	openhands            an event (those a wrapping object holds included)
//
// Whatever cannot be split into records counts as one bad record: a
// malformed or truncated document, conversation or row, a conversation
// without chat_messages, a row without a message list, the rest of an array
// that stops splitting, stray data between values. Messages, compactions
// and problems carry the 1-based text line where their record starts
// (problems about a whole document, line 0).
//
// Readers: claude-code (Claude Code session JSONL), claude-ai (Claude.ai
// data exports, .zip included), chatgpt (ChatGPT data exports), codex (Codex CLI rollouts), openai-chat
// (OpenAI-style message logs and the dataset rows that use them), swe-agent
// (.traj) and openhands (event streams). Each documents its choices on its
// type; a file may hold several transcripts (an export's conversations, a
// dataset's rows), emitted in file order with distinct ids.
package loader

import (
	"context"
	"fmt"
	"io"
	"sort"
	"sync"

	"github.com/compactbench/compactbench/internal/transcript"
)

// Format is a transcript reader that the registry can choose by content.
type Format interface {
	// Name is the format's stable id ("claude-code", ...), shown in the
	// transcripts table and accepted by --input-format.
	Name() string
	// Sniff scores how likely it is that a file is in this format, from its
	// path and its first bytes (decompressed): 0 means no; higher wins.
	Sniff(path string, head []byte) int
	// Read reads every transcript in the source and passes each to emit, in
	// file order. Content problems go on the transcripts; an error return is
	// reserved for I/O failures and for emit's own errors.
	Read(src *Source, emit func(*transcript.Transcript) error) error
}

// Source is one opened input file.
type Source struct {
	// Path is the file's path as reported in outputs.
	Path string
	// R yields the decompressed content.
	R io.Reader
	// Compressed names the compression of the file ("", "gzip", "zstd").
	Compressed string

	// lim bounds what reading the file may cost (limits fills defaults).
	lim       Limits
	limitsSet bool
	// lost are the lines eachLine skipped for a limit, not yet settled on
	// an emitted transcript.
	lost []lostLine
	// ctx, when set, stops the line and value loops.
	ctx context.Context
}

var (
	regMu   sync.RWMutex
	formats = map[string]Format{}
)

// Register adds a format to the registry. Readers register themselves in
// their package's init; registering a name twice panics.
func Register(f Format) {
	regMu.Lock()
	defer regMu.Unlock()
	if _, dup := formats[f.Name()]; dup {
		panic("loader: format registered twice: " + f.Name())
	}
	formats[f.Name()] = f
}

// Lookup returns the format with the given name.
func Lookup(name string) (Format, error) {
	regMu.RLock()
	defer regMu.RUnlock()
	f, ok := formats[name]
	if !ok {
		return nil, fmt.Errorf("unknown input format %q (known: %v)", name, formatNamesLocked())
	}
	return f, nil
}

// FormatNames lists the registered formats, sorted.
func FormatNames() []string {
	regMu.RLock()
	defer regMu.RUnlock()
	return formatNamesLocked()
}

func formatNamesLocked() []string {
	names := make([]string, 0, len(formats))
	for n := range formats {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// Detect picks the format that scores highest for the file; ties go to the
// lexically first name so detection is deterministic. It returns nil when no
// format claims the file.
func Detect(path string, head []byte) Format {
	regMu.RLock()
	defer regMu.RUnlock()
	var best Format
	bestScore := 0
	var shape *headShape
	for _, n := range formatNamesLocked() {
		f := formats[n]
		var s int
		if ss, ok := f.(shapeSniffer); ok {
			if shape == nil {
				h := shapeOf(head)
				shape = &h
			}
			s = ss.sniffShape(path, head, *shape)
		} else {
			s = f.Sniff(path, head)
		}
		if s > bestScore {
			best, bestScore = f, s
		}
	}
	return best
}

// shapeSniffer is a format whose Sniff reads the head's shape (shapeOf):
// Detect reads it once for all of them, where each Sniff would read it
// again. sniffShape is Sniff given that shape, which it only reads.
type shapeSniffer interface {
	sniffShape(path string, head []byte, h headShape) int
}
