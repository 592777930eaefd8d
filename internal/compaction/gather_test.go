package compaction

import (
	"reflect"
	"testing"
)

// TestGatherCachedMatchesFresh: gather over recorded messages, which reads
// their sentences from the transcript's cache (filled by earlier gathers
// over other spans), finds what gather over copies of the messages finds,
// where every sentence is looked at afresh. Real corpus, every span of up
// to 40 messages starting at every 7th message.
func TestGatherCachedMatchesFresh(t *testing.T) {
	for _, tr := range corpus(t) {
		sh := NewShared(tr)
		n := len(tr.Messages)
		for start := 0; start < n; start += 7 {
			end := min(n, start+1+start%40)
			recorded, copies := make([]Item, 0, end-start), make([]Item, 0, end-start)
			for o := start; o < end; o++ {
				m := tr.Messages[o]
				recorded = append(recorded, Item{Msg: &tr.Messages[o], Orig: o})
				copies = append(copies, Item{Msg: &m, Orig: o})
			}
			got, want := gather(sh, recorded), gather(sh, copies)
			got.cues, want.cues = cueText{}, cueText{}
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("%s [%d,%d): gather with the cache\n%+v\nwithout\n%+v", tr.Path, start, end, got, want)
			}
		}
		if sh.cues == nil {
			t.Fatalf("%s: the cache was not used", tr.Path)
		}
	}
}
