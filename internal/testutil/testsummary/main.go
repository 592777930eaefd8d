// Command testsummary reads `go test -json` on stdin and prints what a
// person needs from it: one line per package (ok, FAIL, no tests), the
// output of every failed test and package, and how many tests were skipped
// and why (each skipped test with its skip message). It exits 1 when a test
// or package failed, or the input ended without a package result.
//
//	go test -json ./... | go run ./internal/testutil/testsummary
package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
)

// event is one line of test2json output.
type event struct {
	Action  string
	Package string
	Test    string
	Output  string
	Elapsed float64
}

func main() {
	os.Exit(run(os.Stdin, os.Stdout))
}

func run(in io.Reader, out io.Writer) int {
	outputs := map[string][]string{} // package + "\x00" + test → output lines
	type skip struct{ name, why string }
	var skips []skip
	failed, packages := false, 0
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		var e event
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			fmt.Fprintln(out, sc.Text()) // not test2json: build output
			continue
		}
		key := e.Package + "\x00" + e.Test
		switch e.Action {
		case "output":
			outputs[key] = append(outputs[key], e.Output)
		case "skip":
			if e.Test != "" {
				skips = append(skips, skip{e.Package + " " + e.Test, skipReason(outputs[key])})
			} else {
				packages++
				fmt.Fprintf(out, "?   \t%s\t[no test files]\n", e.Package)
			}
		case "fail":
			failed = true
			if e.Test != "" {
				fmt.Fprintf(out, "--- FAIL: %s %s\n%s", e.Package, e.Test, strings.Join(outputs[key], ""))
			} else {
				packages++
				// Tests of the package that never ended (a timeout, a
				// panic) hold the reason.
				var open []string
				for k := range outputs {
					if pkg, test, _ := strings.Cut(k, "\x00"); pkg == e.Package && test != "" {
						open = append(open, k)
					}
				}
				sort.Strings(open)
				for _, k := range open {
					_, test, _ := strings.Cut(k, "\x00")
					fmt.Fprintf(out, "--- unfinished: %s %s\n%s", e.Package, test, tail(outputs[k], 40))
					delete(outputs, k)
				}
				var lines []string
				for _, l := range outputs[key] {
					if !strings.HasPrefix(l, "FAIL\t") && !strings.HasPrefix(l, "ok  \t") && strings.TrimSpace(l) != "FAIL" {
						lines = append(lines, l)
					}
				}
				fmt.Fprintf(out, "%sFAIL\t%s\t%.3fs\n", strings.Join(lines, ""), e.Package, e.Elapsed)
			}
		case "pass":
			if e.Test == "" {
				packages++
				fmt.Fprintf(out, "ok  \t%s\t%.3fs\n", e.Package, e.Elapsed)
			}
		}
		if e.Action == "pass" || e.Action == "skip" || e.Action == "fail" {
			if e.Test != "" {
				delete(outputs, key)
			}
		}
	}
	sort.Slice(skips, func(i, j int) bool { return skips[i].name < skips[j].name })
	fmt.Fprintf(out, "%d tests skipped", len(skips))
	if len(skips) > 0 {
		fmt.Fprint(out, ":")
	}
	fmt.Fprintln(out)
	for _, s := range skips {
		fmt.Fprintf(out, "  %s: %s\n", s.name, s.why)
	}
	if failed || packages == 0 {
		return 1
	}
	return 0
}

// skipReason is the skip message among a skipped test's output lines (the
// line after "--- SKIP", or the last line that is not test framing).
func skipReason(lines []string) string {
	why := ""
	for _, l := range lines {
		t := strings.TrimSpace(l)
		if t == "" || strings.HasPrefix(t, "=== ") || strings.HasPrefix(t, "--- SKIP") {
			continue
		}
		why = t
	}
	if i := strings.Index(why, ": "); i > 0 && strings.Contains(why[:i], "_test.go:") {
		why = why[i+2:]
	}
	if why == "" {
		return "(no reason given)"
	}
	return why
}

// tail joins the last n lines.
func tail(lines []string, n int) string {
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "")
}
