package main

import (
	"strings"
	"testing"
)

func TestSummary(t *testing.T) {
	in := strings.Join([]string{
		`{"Action":"run","Package":"p","Test":"TestA"}`,
		`{"Action":"output","Package":"p","Test":"TestA","Output":"=== RUN   TestA\n"}`,
		`{"Action":"output","Package":"p","Test":"TestA","Output":"    a_test.go:9: real corpus not found; skipping\n"}`,
		`{"Action":"output","Package":"p","Test":"TestA","Output":"--- SKIP: TestA (0.00s)\n"}`,
		`{"Action":"skip","Package":"p","Test":"TestA"}`,
		`{"Action":"output","Package":"p","Test":"TestB","Output":"    b_test.go:3: got 1, want 2\n"}`,
		`{"Action":"fail","Package":"p","Test":"TestB"}`,
		`{"Action":"output","Package":"p","Test":"TestC","Output":"panic: test timed out after 10m0s\n"}`,
		`{"Action":"output","Package":"p","Output":"FAIL\tp\t0.500s\n"}`,
		`{"Action":"fail","Package":"p","Elapsed":0.5}`,
		`{"Action":"pass","Package":"q","Elapsed":0.25}`,
	}, "\n")
	var out strings.Builder
	if code := run(strings.NewReader(in), &out); code != 1 {
		t.Errorf("exit %d, want 1", code)
	}
	if strings.Count(out.String(), "got 1, want 2") != 1 || strings.Contains(out.String(), "unfinished: p TestB") {
		t.Errorf("a failed test's output is repeated:\n%s", out.String())
	}
	if strings.Count(out.String(), "FAIL\tp") != 1 {
		t.Errorf("the package's FAIL line is repeated:\n%s", out.String())
	}
	for _, want := range []string{"--- FAIL: p TestB\n    b_test.go:3: got 1, want 2", "--- unfinished: p TestC\npanic: test timed out", "FAIL\tp\t0.500s", "ok  \tq\t0.250s",
		"1 tests skipped:\n  p TestA: real corpus not found; skipping\n"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
	out.Reset()
	if code := run(strings.NewReader(`{"Action":"pass","Package":"q","Elapsed":0.25}`), &out); code != 0 || !strings.Contains(out.String(), "0 tests skipped\n") {
		t.Errorf("exit %d:\n%s", code, out.String())
	}
}
