package anchors

import (
	"bytes"
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"hash/maphash"
	"path"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/valyala/fastjson"
)

// NoneType is the label type that says "this transcript has no anchors"
// (with turn -1).
const NoneType = "none"

// Label is one gold anchor from a label file (JSONL, one object a line):
//
//	{"transcript": "<id or path>", "turn": <0-based or null>, "type": "<anchor type>", "note": "<optional>",
//	 "prompt_uuid": "<optional>", "timestamp": "<optional>", "prompt_head": "<optional>"}
//
// "transcript" is a transcript ID, a path relative to the label file's
// directory, or an absolute path. {"transcript": "...", "turn": -1,
// "type": "none"} marks a transcript as labelled with no anchors. Other keys
// are ignored.
//
// A turn index depends on how a reader groups the recording into turns, so a
// label may also name its turn by the recorded id ("prompt_uuid") or
// timestamp of the prompt that opens it, and carry the prompt's first
// characters ("prompt_head") as a check; "turn" may then be null. See
// ResolveLabels for the order in which they are tried.
type Label struct {
	Transcript string
	// Turn is the 0-based turn index; -1 for a "none" line; Unresolved when
	// the file gives null (the turn is named by PromptUUID or Timestamp).
	Turn int
	// Type is the anchor type; "" for a "none" line.
	Type Type
	Note string
	// PromptUUID, Timestamp and PromptHead identify the turn's prompt: its
	// recorded id, its recorded timestamp and its first characters.
	PromptUUID, Timestamp, PromptHead string
	// File and Line locate the label.
	File string
	Line int
}

// Unresolved is the Turn of a label whose file gives "turn": null.
const Unresolved = -2

// ParseLabels reads a label file's content. Every bad line is an error with
// file and line (they are joined); labels are the ground truth numbers are
// quoted against, so nothing is silently dropped.
func ParseLabels(data []byte, file string) ([]Label, error) {
	out, problems := ParseLabelsLenient(data, file)
	if len(problems) == 0 {
		return out, nil
	}
	var errs []error
	for _, p := range problems[:min(len(problems), maxErrors)] {
		errs = append(errs, errors.New(p.String()))
	}
	return nil, errors.Join(errs...)
}

// LabelProblem is a label line that could not be used: a bad line
// (ParseLabelsLenient), or a label that could not be placed on a turn with
// confidence (ResolveLabels); it is reported, never scored.
type LabelProblem struct {
	File   string
	Line   int
	Reason string
}

// String is "file:line: reason".
func (p LabelProblem) String() string { return fmt.Sprintf("%s:%d: %s", p.File, p.Line, p.Reason) }

// ParseLabelsLenient reads a label file's content as ParseLabels does, but
// keeps the good lines: each bad line is returned as a problem (the run
// reports them as problem rows rather than stopping).
func ParseLabelsLenient(data []byte, file string) ([]Label, []LabelProblem) {
	var out []Label
	problems := ParseLabelsFunc(data, file, func(l Label) { out = append(out, l) })
	return out, problems
}

// ParseLabelsFunc is ParseLabelsLenient calling add with each good label
// in line order rather than returning them all (a LabelSetBuilder's Add).
func ParseLabelsFunc(data []byte, file string, add func(Label)) []LabelProblem {
	var problems []LabelProblem
	var p fastjson.Parser
	bad := func(line int, format string, args ...any) {
		problems = append(problems, LabelProblem{File: file, Line: line, Reason: fmt.Sprintf(format, args...)})
	}
	for n := 1; len(data) > 0; n++ {
		var line []byte
		if i := bytes.IndexByte(data, '\n'); i >= 0 {
			line, data = data[:i], data[i+1:]
		} else {
			line, data = data, nil
		}
		line = bytes.TrimSpace(line)
		if len(line) == 0 || line[0] == '#' {
			continue
		}
		v, err := p.ParseBytes(line)
		if err != nil {
			bad(n, "malformed JSON: %s", shortJSONErr(err))
			continue
		}
		if v.Type() != fastjson.TypeObject {
			bad(n, "a label is a JSON object, got %s", v.Type())
			continue
		}
		l := Label{File: file, Line: n}
		tv := v.Get("transcript")
		if tv == nil || tv.Type() != fastjson.TypeString || len(tv.GetStringBytes()) == 0 {
			bad(n, `"transcript" must be a non-empty string (a transcript id or a path)`)
			continue
		}
		l.Transcript = string(tv.GetStringBytes())
		ok := true
		for _, k := range [...]struct {
			key string
			dst *string
		}{{"prompt_uuid", &l.PromptUUID}, {"timestamp", &l.Timestamp}, {"prompt_head", &l.PromptHead}} {
			if sv := v.Get(k.key); sv != nil {
				if sv.Type() != fastjson.TypeString && sv.Type() != fastjson.TypeNull {
					bad(n, "%q must be a string", k.key)
					ok = false
				}
				*k.dst = string(sv.GetStringBytes())
			}
		}
		if !ok {
			continue
		}
		nv := v.Get("turn")
		switch {
		case nv != nil && nv.Type() == fastjson.TypeNull && (l.PromptUUID != "" || l.Timestamp != ""):
			l.Turn = Unresolved
		case nv == nil || nv.Type() != fastjson.TypeNumber:
			bad(n, `"turn" must be a number (0-based turn index, or -1 with type "none"), or null with "prompt_uuid" or "timestamp"`)
			continue
		default:
			f, _ := nv.Float64()
			if f != float64(int(f)) || f < -1 {
				bad(n, `"turn" must be an integer >= 0 (or -1 with type "none"), got %v`, f)
				continue
			}
			l.Turn = int(f)
		}
		yv := v.Get("type")
		if yv == nil || yv.Type() != fastjson.TypeString {
			bad(n, `"type" must be a string`)
			continue
		}
		typ := string(yv.GetStringBytes())
		switch {
		case typ == NoneType:
			if l.Turn != -1 {
				bad(n, `type "none" goes with turn -1`)
				continue
			}
		default:
			t, ok := ParseType(typ)
			if !ok {
				bad(n, "unknown anchor type %q (known: %s, or none)", typ, typeNames())
				continue
			}
			if l.Turn == -1 {
				bad(n, `turn -1 goes with type "none"`)
				continue
			}
			l.Type = t
		}
		if nt := v.Get("note"); nt != nil {
			if nt.Type() != fastjson.TypeString && nt.Type() != fastjson.TypeNull {
				bad(n, `"note" must be a string`)
				continue
			}
			l.Note = string(nt.GetStringBytes())
		}
		add(l)
	}
	return problems
}

func shortJSONErr(err error) string {
	s := err.Error()
	if i := strings.Index(s, "; unparsed tail"); i >= 0 {
		s = s[:i]
	}
	return strings.TrimPrefix(s, "cannot parse JSON: ")
}

func typeNames() string {
	names := make([]string, len(Types))
	for i, t := range Types {
		names[i] = string(t)
	}
	return strings.Join(names, ", ")
}

// LabelSet indexes gold labels by transcript. It is immutable once built
// and safe for concurrent use.
//
// Its memory does not follow the labels' strings: the labels are kept
// encoded, past the first MiB in a temporary file (labelStore), and the
// index holds no copy of a label's keys: byID and byPath are the labels'
// numbers sorted by a 32-bit hash of their transcript ID and of their
// resolved path, and a lookup reads each candidate back and checks it, so
// a label costs 8 bytes for each index, 8 for its offset and a flag while
// a run records its matches.
type LabelSet struct {
	store  labelStore
	n      int
	byID   []indexKey
	byPath []indexKey
	seed   maphash.Seed
	base   string
	hash   string
}

// indexKey is one entry of a LabelSet index: the hash of a label's key
// and the label's number.
type indexKey struct {
	h uint32
	i uint32
}

// NewLabelSet indexes labels. base is the directory relative transcript and
// label-file paths are taken from (the working directory in the CLI; "" to
// compare paths as written). A label's "transcript" is looked up both as an
// ID and as a path relative to its label file's directory (or absolute).
func NewLabelSet(labels []Label, base string) *LabelSet {
	b := NewLabelSetBuilder(base)
	for _, l := range labels {
		b.Add(l)
	}
	return b.Build()
}

// LabelSetBuilder makes a LabelSet one label at a time (NewLabelSet's
// result for the labels in the order added), so that a large label file
// is never held whole.
type LabelSetBuilder struct {
	s *LabelSet
	h hash.Hash
}

// NewLabelSetBuilder starts a LabelSet; base is NewLabelSet's.
func NewLabelSetBuilder(base string) *LabelSetBuilder {
	return &LabelSetBuilder{s: &LabelSet{seed: maphash.MakeSeed(), base: base}, h: sha256.New()}
}

// Add appends a label.
func (b *LabelSetBuilder) Add(l Label) {
	s, h := b.s, b.h
	i := uint32(s.n)
	s.n++
	s.byID = append(s.byID, indexKey{s.hashKey(l.Transcript), i})
	s.byPath = append(s.byPath, indexKey{s.hashKey(s.labelPath(&l)), i})
	s.store.add(&l)
	fmt.Fprintf(h, "%s\x00%s\x00%d\x00%s", toSlash(l.File), l.Transcript, l.Turn, l.Type)
	if l.PromptUUID != "" || l.Timestamp != "" || l.PromptHead != "" {
		fmt.Fprintf(h, "\x00%s\x00%s\x00%s", l.PromptUUID, l.Timestamp, l.PromptHead)
	}
	h.Write([]byte{'\n'})
}

// Build sorts the indexes and returns the set; the builder is spent.
func (b *LabelSetBuilder) Build() *LabelSet {
	s := b.s
	byKey := func(a, b indexKey) int {
		if c := cmp.Compare(a.h, b.h); c != 0 {
			return c
		}
		return cmp.Compare(a.i, b.i)
	}
	s.byID, s.byPath = slices.Clip(s.byID), slices.Clip(s.byPath)
	slices.SortFunc(s.byID, byKey)
	slices.SortFunc(s.byPath, byKey)
	s.store.done()
	s.hash = hex.EncodeToString(b.h.Sum(nil)[:8])
	b.s = nil
	return s
}

// hashKey is the index hash of a transcript ID or resolved path.
func (s *LabelSet) hashKey(key string) uint32 { return uint32(maphash.String(s.seed, key)) }

// labelPath is label l's transcript as a path: relative to its label
// file's directory (or absolute), made absolute against the base.
func (s *LabelSet) labelPath(l *Label) string {
	p := l.Transcript
	if !isAbs(p) {
		p = path.Join(toSlash(filepath.Dir(l.File)), toSlash(p))
	}
	return s.abs(p)
}

// lookup calls visit with the number of every label whose key (its ID when
// byPath is false, its resolved path when true) is key, in label order.
func (s *LabelSet) lookup(key string, byPath bool, visit func(i int)) {
	idx := s.byID
	if byPath {
		idx = s.byPath
	}
	h := s.hashKey(key)
	k, _ := slices.BinarySearchFunc(idx, h, func(e indexKey, h uint32) int { return cmp.Compare(e.h, h) })
	for ; k < len(idx) && idx[k].h == h; k++ {
		i := int(idx[k].i)
		l := s.store.label(i)
		if byPath && s.labelPath(&l) == key || !byPath && l.Transcript == key {
			visit(i)
		}
	}
}

func toSlash(p string) string { return filepath.ToSlash(p) }

func isAbs(p string) bool {
	return strings.HasPrefix(p, "/") || filepath.IsAbs(p) || (len(p) > 2 && p[1] == ':' && (p[2] == '/' || p[2] == '\\'))
}

// abs makes a slash path absolute against the base and cleans it.
func (s *LabelSet) abs(p string) string {
	p = toSlash(p)
	if s.base != "" && !isAbs(p) {
		p = path.Join(toSlash(s.base), p)
	}
	return path.Clean(p)
}

// Len is the number of labels.
func (s *LabelSet) Len() int { return s.n }

// Err returns the first error reading a label back from the set's
// temporary file (a failing disk), or nil. While it is not nil, lookups
// may have missed labels: a caller checks it before it writes results.
func (s *LabelSet) Err() error {
	if s == nil {
		return nil
	}
	return s.store.readErr()
}

// For returns the labels of the transcript with the given ID and path, and
// whether it is labelled at all (a transcript with only a "none" line is
// labelled with no anchors; one with no line is unlabelled).
func (s *LabelSet) For(id, transcriptPath string) (labels []Label, labelled bool) {
	if s == nil {
		return nil, false
	}
	var idx []int
	add := func(i int) { idx = append(idx, i) }
	s.lookup(id, false, add)
	s.lookup(s.abs(transcriptPath), true, add)
	if len(idx) == 0 {
		return nil, false
	}
	sort.Ints(idx)
	for k, i := range idx {
		if k > 0 && idx[k-1] == i {
			continue
		}
		if l := s.store.label(i); l.Type != "" {
			labels = append(labels, l)
		}
	}
	return labels, true
}

// Matches records which labels name a transcript of a run, one transcript
// at a time, in memory bounded by the number of labels (not of
// transcripts); Unmatched then lists the others.
type Matches struct {
	s   *LabelSet
	hit []bool
}

// Matches starts recording the labels matched by a run's transcripts (a
// nil set gives a Matches that records nothing).
func (s *LabelSet) Matches() *Matches {
	m := &Matches{s: s}
	if s != nil {
		m.hit = make([]bool, s.n)
	}
	return m
}

// Add marks the labels naming the transcript with this ID and path.
func (m *Matches) Add(id, transcriptPath string) {
	if m == nil || m.s == nil {
		return
	}
	mark := func(i int) { m.hit[i] = true }
	m.s.lookup(id, false, mark)
	m.s.lookup(m.s.abs(transcriptPath), true, mark)
}

// Err is the label set's Err (nil for a nil set).
func (m *Matches) Err() error {
	if m == nil {
		return nil
	}
	return m.s.Err()
}

// Unmatched returns the labels no added transcript named, in label order.
func (m *Matches) Unmatched() []Label {
	if m == nil || m.s == nil {
		return nil
	}
	var out []Label
	for i, h := range m.hit {
		if !h {
			out = append(out, m.s.store.label(i))
		}
	}
	return out
}

// Unmatched returns the labels whose transcript is not among seen (the IDs
// and paths of the transcripts read), so a typo in a label file is visible.
func (s *LabelSet) Unmatched(ids, paths []string) []Label {
	if s == nil {
		return nil
	}
	m := s.Matches()
	for _, id := range ids {
		m.s.lookup(id, false, func(i int) { m.hit[i] = true })
	}
	for _, p := range paths {
		m.s.lookup(m.s.abs(p), true, func(i int) { m.hit[i] = true })
	}
	return m.Unmatched()
}

// MarshalJSON identifies the label set by size and content hash (it is part
// of the analysis configuration hashed into summary.json).
func (s *LabelSet) MarshalJSON() ([]byte, error) {
	return json.Marshal(struct {
		Labels int    `json:"labels"`
		Hash   string `json:"hash"`
	}{s.n, s.hash})
}
