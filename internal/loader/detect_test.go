package loader

import (
	"os"
	"testing"

	"github.com/compactbench/compactbench/internal/testutil"
)

// oldDetect is Detect as it was before it read a head's shape once for
// all the formats that sniff it, kept as its oracle: every format's Sniff
// in turn.
func oldDetect(path string, head []byte) Format {
	regMu.RLock()
	defer regMu.RUnlock()
	var best Format
	bestScore := 0
	for _, n := range formatNamesLocked() {
		f := formats[n]
		if s := f.Sniff(path, head); s > bestScore {
			best, bestScore = f, s
		}
	}
	return best
}

// sameDetect fails t when Detect and its oracle pick different formats.
func sameDetect(t testing.TB, path string, head []byte) {
	t.Helper()
	name := func(f Format) string {
		if f == nil {
			return "(none)"
		}
		return f.Name()
	}
	if got, want := name(Detect(path, head)), name(oldDetect(path, head)); got != want {
		t.Fatalf("%s: Detect = %s, want %s", path, got, want)
	}
}

func TestDetectOracle(t *testing.T) {
	n := 0
	for _, dir := range []string{"../../corpora", "testdata", testutil.RealCorpus(t)} {
		for _, p := range corpusFiles(t, dir, ".jsonl", ".json", ".traj") {
			data, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			sameDetect(t, p, data[:min(len(data), sniffSize)])
			n++
		}
	}
	t.Logf("%d files", n)
}

func FuzzDetect(f *testing.F) {
	f.Add("conversations.json", []byte(`[{"mapping":{},"current_node":"x"}]`))
	f.Add("x.traj", []byte(`{"trajectory":[{"action":"a"}]}`))
	f.Add("x.json", []byte(`{"messages":[{"role":"user","content":"hi"}]}`))
	f.Fuzz(func(t *testing.T, path string, head []byte) {
		sameDetect(t, path, head)
	})
}
