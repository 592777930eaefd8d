package anchors

import (
	"fmt"
	"math/rand/v2"
	"path"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strings"
	"testing"
)

// mapLabelIndex is the label index as it was before the hashed one: maps
// from each label's ID and resolved path to its numbers. It is the oracle
// the LabelSet's lookups are checked against.
type mapLabelIndex struct {
	s            *LabelSet
	labels       []Label
	byID, byPath map[string][]int
}

func newMapLabelIndex(s *LabelSet, labels []Label) *mapLabelIndex {
	m := &mapLabelIndex{s: s, labels: labels, byID: map[string][]int{}, byPath: map[string][]int{}}
	for i, l := range labels {
		m.byID[l.Transcript] = append(m.byID[l.Transcript], i)
		p := l.Transcript
		if !isAbs(p) {
			p = path.Join(toSlash(filepath.Dir(l.File)), toSlash(p))
		}
		p = s.abs(p)
		m.byPath[p] = append(m.byPath[p], i)
	}
	return m
}

func (m *mapLabelIndex) forTranscript(id, p string) ([]Label, bool) {
	idx := append([]int(nil), m.byID[id]...)
	idx = append(idx, m.byPath[m.s.abs(p)]...)
	if len(idx) == 0 {
		return nil, false
	}
	sort.Ints(idx)
	var out []Label
	for k, i := range idx {
		if k > 0 && idx[k-1] == i {
			continue
		}
		if l := m.labels[i]; l.Type != "" {
			out = append(out, l)
		}
	}
	return out, true
}

func (m *mapLabelIndex) unmatched(ids, paths []string) []Label {
	hit := make([]bool, len(m.labels))
	for _, id := range ids {
		for _, i := range m.byID[id] {
			hit[i] = true
		}
	}
	for _, p := range paths {
		for _, i := range m.byPath[m.s.abs(p)] {
			hit[i] = true
		}
	}
	var out []Label
	for i, h := range hit {
		if !h {
			out = append(out, m.labels[i])
		}
	}
	return out
}

// TestLabelIndexMatchesMaps checks For, Unmatched and Matches of the
// hashed index against the map index they replaced, on label sets whose
// transcripts are IDs, relative paths (from label files in several
// directories, with ./ and ..) and absolute paths, several labels a
// transcript, and lookups that hit and miss; the labels kept in memory, or
// all but the last few in the temporary file.
func TestLabelIndexMatchesMaps(t *testing.T) {
	for _, tc := range []struct {
		name   string
		base   string
		labels int
		mem    int
	}{
		{"no base", "", 300, 1 << 20},
		{"base", "/work/run", 300, 1 << 20},
		{"one label", "/w", 1, 1 << 20},
		{"empty", "/w", 0, 1 << 20},
		{"spilled, no base", "", 300, 100},
		{"spilled, base", "/work/run", 300, 1},
		{"spilled, one label", "/w", 1, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			old := labelMem
			labelMem = tc.mem
			defer func() { labelMem = old }()
			rng := rand.New(rand.NewPCG(1, uint64(tc.labels)))
			files := []string{"labels.jsonl", "corp/labels.jsonl", "corp/sub/x.labels.jsonl", "/abs/labels.jsonl"}
			names := func() string {
				switch rng.IntN(5) {
				case 0:
					return fmt.Sprintf("s%d", rng.IntN(40))
				case 1:
					return fmt.Sprintf("a/s%d.jsonl", rng.IntN(40))
				case 2:
					return fmt.Sprintf("./sub/../s%d.jsonl", rng.IntN(40))
				case 3:
					return fmt.Sprintf("/abs/s%d.jsonl", rng.IntN(40))
				default:
					return fmt.Sprintf("sub/s%d.jsonl", rng.IntN(40))
				}
			}
			var labels []Label
			for i := range tc.labels {
				l := Label{Transcript: names(), File: files[rng.IntN(len(files))], Line: i + 1, Turn: rng.IntN(5), Type: Types[rng.IntN(len(Types))],
					Note: []string{"", "fixed the parser", "ünïcode ✓"}[rng.IntN(3)], PromptUUID: []string{"", "u-1"}[rng.IntN(2)],
					Timestamp: []string{"", "2026-01-02T03:04:05Z"}[rng.IntN(2)], PromptHead: []string{"", "please fix"}[rng.IntN(2)]}
				if rng.IntN(6) == 0 {
					l.Turn, l.Type = -1, ""
				}
				labels = append(labels, l)
			}
			s := NewLabelSet(labels, tc.base)
			if tc.mem < 1000 && tc.labels > 1 && s.store.log.InFile() == 0 {
				t.Fatal("nothing went to the temporary file")
			}
			oracle := newMapLabelIndex(s, labels)
			var queries [][2]string
			for range 400 {
				id := names()
				p := []string{id, "corp/" + id, "corp/sub/" + id, path.Join(tc.base, "corp", id), "/abs/" + path.Base(id)}[rng.IntN(5)]
				queries = append(queries, [2]string{id, p})
			}
			m := s.Matches()
			var ids, paths []string
			for k, q := range queries {
				got, gotOK := s.For(q[0], q[1])
				want, wantOK := oracle.forTranscript(q[0], q[1])
				if gotOK != wantOK || !slices.Equal(got, want) {
					t.Fatalf("For(%q, %q) = %v %v, want %v %v", q[0], q[1], got, gotOK, want, wantOK)
				}
				if k%3 == 0 {
					m.Add(q[0], q[1])
					ids, paths = append(ids, q[0]), append(paths, q[1])
				}
			}
			want := oracle.unmatched(ids, paths)
			if got := m.Unmatched(); !slices.Equal(got, want) {
				t.Fatalf("Matches.Unmatched: %d labels, want %d", len(got), len(want))
			}
			if got := s.Unmatched(ids, paths); !slices.Equal(got, want) {
				t.Fatalf("Unmatched: %d labels, want %d", len(got), len(want))
			}
			if len(want) == len(labels) && len(labels) > 10 {
				t.Fatalf("no query matched a label: the test checks nothing")
			}
		})
	}
}

// TestNilMatches: a run without labels records nothing and warns of none.
func TestNilMatches(t *testing.T) {
	var m *Matches
	m.Add("x", "y")
	if un := m.Unmatched(); un != nil {
		t.Fatalf("nil Matches: %v", un)
	}
	var s *LabelSet
	s.Matches().Add("x", "y")
	if un := s.Matches().Unmatched(); un != nil {
		t.Fatalf("nil set: %v", un)
	}
}

// TestLabelSetMemoryBounded: 100,000 labels with long notes leave the live
// heap at most 40 bytes a label (plus the last MiB of records) above where
// it was; held as Labels they took about 300 bytes each.
func TestLabelSetMemoryBounded(t *testing.T) {
	if testing.Short() {
		t.Skip("builds 100,000 labels")
	}
	live := func() uint64 {
		runtime.GC()
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		return m.HeapAlloc
	}
	const n = 100_000
	before := live()
	b := NewLabelSetBuilder("/w")
	for i := range n {
		b.Add(Label{Transcript: fmt.Sprintf("bugfix/%08x-aaaa-bbbb-cccc-%012x.jsonl", i, i), Turn: i % 9, Type: Types[i%len(Types)],
			Note: "the fix was verified by the test run that followed it", File: "corpus/labels.jsonl", Line: i + 1})
	}
	s := b.Build()
	grew := int64(live()) - int64(before)
	if limit := int64(40*n + 1<<20); grew > limit {
		t.Errorf("%d labels grew the live heap by %d bytes (limit %d)", n, grew, limit)
	}
	if got, ok := s.For("bugfix/00000007-aaaa-bbbb-cccc-000000000007.jsonl", "x"); !ok || len(got) != 1 || got[0].Line != 8 {
		t.Errorf("For: %v %v", got, ok)
	}
	runtime.KeepAlive(s)
}

// TestLabelReadErrorReported checks that a label which cannot be read back
// from the temporary file (here: the file closed under the set) is no
// panic: lookups find nothing for it and Err reports it.
func TestLabelReadErrorReported(t *testing.T) {
	old := labelMem
	labelMem = 1
	defer func() { labelMem = old }()
	var labels []Label
	for i := range 50 {
		labels = append(labels, Label{Transcript: fmt.Sprintf("s%d", i), File: "labels.jsonl", Line: i + 1, Turn: 1, Type: Types[0]})
	}
	s := NewLabelSet(labels, "")
	if s.store.log.InFile() == 0 {
		t.Fatal("nothing went to the temporary file")
	}
	if got, ok := s.For("s3", "elsewhere/x.jsonl"); !ok || len(got) != 1 || s.Err() != nil {
		t.Fatalf("before the failure: For = %v, %v; Err = %v", got, ok, s.Err())
	}
	s.store.log.Close()
	m := s.Matches()
	m.Add("s3", "elsewhere/x.jsonl") // must not panic
	if got, _ := s.For("s4", "elsewhere/y.jsonl"); len(got) != 0 {
		t.Errorf("For after the failure = %v, want nothing", got)
	}
	for _, err := range []error{s.Err(), m.Err()} {
		if err == nil || !strings.Contains(err.Error(), "reading label") {
			t.Errorf("Err = %v, want the read error", err)
		}
	}
	var none *LabelSet
	if none.Err() != nil || none.Matches().Err() != nil {
		t.Error("a nil set has an error")
	}
}
