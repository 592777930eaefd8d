package main

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// calMemos lists the calibration memo files of a cache.
func calMemos(t *testing.T, cache string) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(cache, "calibration", "*.json"))
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// TestRunCacheCalibrationMemo: a cached run stores its calibration figures
// and a warm run takes them from the cache (a forged entry with a valid
// checksum shows through); a damaged entry is refitted, gives a cold run's
// outputs and is rewritten; a changed input or configuration gets an entry
// of its own. Outputs always equal a run without the cache.
func TestRunCacheCalibrationMemo(t *testing.T) {
	dir := t.TempDir()
	corpus := filepath.Join(dir, "corpus")
	copyTree(t, "../../corpora", corpus)
	cache := filepath.Join(dir, "cache")
	out := func(name string) string { return filepath.Join(dir, name) }

	plainRun(t, out("plain"), corpus)
	cachedRun(t, cache, out("cold"), corpus)
	sameOutputs(t, out("plain"), out("cold"))
	memos := calMemos(t, cache)
	if len(memos) != 1 {
		t.Fatalf("%d calibration memos after a cold run, want 1", len(memos))
	}
	good, err := os.ReadFile(memos[0])
	if err != nil {
		t.Fatal(err)
	}
	cachedRun(t, cache, out("warm"), corpus)
	sameOutputs(t, out("plain"), out("warm"))

	// A forged entry with a valid checksum is what the warm run reports:
	// the figures come from the memo, not from a refit.
	nl := bytes.IndexByte(good, '\n')
	payload := bytes.Replace(good[nl+1:], []byte(`"folds":10,`), []byte(`"folds":77,`), 1)
	if bytes.Equal(payload, good[nl+1:]) {
		t.Fatalf("no folds in the memo %s", good)
	}
	sum := sha256.Sum256(payload)
	forged := append([]byte(calMemoFormat+" "+hex.EncodeToString(sum[:])+"\n"), payload...)
	if err := os.WriteFile(memos[0], forged, 0o644); err != nil {
		t.Fatal(err)
	}
	cachedRun(t, cache, out("forged"), corpus)
	summary, err := os.ReadFile(filepath.Join(out("forged"), "summary.json"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(summary, []byte(`"folds": 77`)) {
		t.Fatal("the warm run did not take its calibration figures from the memo")
	}

	// Damaged entries: refitted, the cold run's outputs, rewritten.
	for name, bad := range map[string][]byte{
		"flipped digit": bytes.Replace(good, []byte(`"folds":10,`), []byte(`"folds":11,`), 1),
		"truncated":     good[:len(good)/2],
		"no header":     good[nl+1:],
		"empty":         {},
	} {
		t.Run(name, func(t *testing.T) {
			if err := os.WriteFile(memos[0], bad, 0o644); err != nil {
				t.Fatal(err)
			}
			cachedRun(t, cache, out("damaged"), corpus)
			sameOutputs(t, out("plain"), out("damaged"))
			if again, _ := os.ReadFile(memos[0]); !bytes.Equal(again, good) {
				t.Errorf("the damaged entry was not rewritten: %q", again)
			}
		})
	}

	// Another configuration: an entry of its own, its own figures.
	plainRun(t, out("plain-w60k"), "--window", "60000", corpus)
	cachedRun(t, cache, out("w60k"), "--window", "60000", corpus)
	sameOutputs(t, out("plain-w60k"), out("w60k"))
	if n := len(calMemos(t, cache)); n != 2 {
		t.Errorf("%d calibration memos after another configuration, want 2", n)
	}

	// A changed input: an entry of its own, the plain run's figures.
	changed := firstSession(t, corpus)
	data, err := os.ReadFile(changed)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitAfter(strings.TrimRight(string(data), "\n"), "\n")
	if err := os.WriteFile(changed, []byte(strings.Join(lines[:len(lines)-1], "")), 0o644); err != nil {
		t.Fatal(err)
	}
	plainRun(t, out("plain2"), corpus)
	cachedRun(t, cache, out("grown"), corpus)
	sameOutputs(t, out("plain2"), out("grown"))
	if n := len(calMemos(t, cache)); n != 3 {
		t.Errorf("%d calibration memos after a changed input, want 3", n)
	}
}
