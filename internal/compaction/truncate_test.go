package compaction

import (
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/compactbench/compactbench/internal/loader"
	"github.com/compactbench/compactbench/internal/testutil"
	"github.com/compactbench/compactbench/internal/transcript"
)

// TestTruncateRememberedSearchMatchesPlain replays truncate with its
// remembered search for the first turn's end and with the plain search
// from the start of the context: the runs and events must be equal. The
// transcripts are a session that goes on in one long turn past the window
// (truncate fires before every call and cannot cut), then turns again, the
// shipped corpora at two windows, and the real corpus at 60,000 tokens.
func TestTruncateRememberedSearchMatchesPlain(t *testing.T) {
	b := &builder{}
	b.user(strings.Repeat("p", 200))
	for i := range 40 {
		id := string(rune('a'+i%26)) + string(rune('a'+i/26))
		b.say("", "Read:"+id+":/f").result(id, false, strings.Repeat("y", 400))
		if i == 30 { // a new turn late: the first cut after many skips
			b.user(strings.Repeat("q", 200))
		}
	}
	long := b.transcript()
	skips := 0
	compareTruncate(t, []*transcript.Transcript{long}, []int{1000, 3000}, &skips)
	if skips == 0 {
		t.Fatal("truncate never skipped: the remembered search was not exercised")
	}

	in, err := loader.Walk([]string{filepath.Join(testutil.RepoRoot(t), "corpora")})
	if err != nil {
		t.Fatal(err)
	}
	var ts []*transcript.Transcript
	for _, f := range in.Files {
		if err := loader.ReadFile(f.Path, loader.Options{}, func(tr *transcript.Transcript) error {
			ts = append(ts, tr)
			return nil
		}); err != nil {
			t.Fatal(err)
		}
	}
	compareTruncate(t, ts, []int{0, 20_000}, &skips)
	t.Run("real corpus", func(t *testing.T) {
		compareTruncate(t, realTranscripts(t, false), []int{60_000}, &skips)
	})
}

// compareTruncate replays truncate over transcripts both ways at each window
// and fails on the first difference; skips adds up the skipped compactions.
func compareTruncate(t *testing.T, ts []*transcript.Transcript, windows []int, skips *int) {
	t.Helper()
	metric := ruler(t, "chars4")
	defer func() { plainTruncate = false }()
	for _, tr := range ts {
		for _, window := range windows {
			opt := &Options{Window: window, Metric: metric, Rulers: rulers}
			var runs [2]Run
			var evs [2][]Event
			for k, plain := range []bool{false, true} {
				plainTruncate = plain
				st := newStrategy[TruncateParams](t, "truncate", nil)
				runs[k], evs[k] = Replay(NewShared(tr), "truncate", st, opt, 0, 1)
			}
			if !reflect.DeepEqual(runs[0], runs[1]) || !reflect.DeepEqual(evs[0], evs[1]) {
				t.Fatalf("%s window %d: remembered search\n%+v\n%+v\nplain search\n%+v\n%+v", tr.Path, window, runs[0], evs[0], runs[1], evs[1])
			}
			*skips += runs[0].Skips
		}
	}
}
