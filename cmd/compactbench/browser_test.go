package main

import (
	"bytes"
	"fmt"
	"image/png"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// TestReportRendersInChromium opens report.html in headless Chromium: the
// page's script must run to its end without an error, each chart must hold
// the data marks the page was written with, and a screenshot must show the
// charts' colours. It runs on the report fixtures and, when present, on the
// real corpus.
func TestReportRendersInChromium(t *testing.T) {
	bin := chromium(t)
	for name, args := range checkedRuns() {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			if code, _, stderr := runCLI(t, append([]string{"run", "-q", "--format", "html", "-o", dir}, args...)...); code != 0 {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			page := filepath.Join(dir, "report.html")
			src, err := os.ReadFile(page)
			if err != nil {
				t.Fatal(err)
			}
			url := "file://" + page
			dom := string(runChromium(t, bin, "--virtual-time-budget=5000", "--dump-dom", url))
			if !regexp.MustCompile(`<html[^>]*data-ready="1"`).MatchString(dom) {
				t.Fatalf("the page's script did not finish:\n%.600s", dom)
			}
			if m := regexp.MustCompile(`data-errors="([^"]*)"`).FindStringSubmatch(dom); m != nil {
				t.Errorf("script errors: %s", m[1])
			}
			want := marksPerChart(string(src))
			got := regexp.MustCompile(`<figure class="chart" id="([a-z-]+)" data-marks="(\d+)"`).FindAllStringSubmatch(dom, -1)
			if len(got) != 5 || len(want) != 5 {
				t.Fatalf("%d charts rendered, %d in the file; want 5", len(got), len(want))
			}
			for _, g := range got {
				n, _ := strconv.Atoi(g[2])
				if n == 0 || n != want[g[1]] {
					t.Errorf("chart %s: %d marks in the browser, %d in the file", g[1], n, want[g[1]])
				}
			}

			shot := filepath.Join(dir, "report.png")
			runChromium(t, bin, "--window-size=1100,4200", "--screenshot="+shot, url)
			if name == "real-corpus" {
				if data, err := os.ReadFile(shot); err == nil {
					os.WriteFile(filepath.Join(os.TempDir(), "compactbench-report.png"), data, 0o644)
				}
			}
			if colours := paletteColoursIn(t, shot); colours < 4 {
				t.Errorf("the screenshot shows %d of the charts' colours, want at least 4", colours)
			}
		})
	}
}

// marksPerChart counts the class="mark" elements of each chart in the file.
func marksPerChart(html string) map[string]int {
	out := map[string]int{}
	for _, f := range regexp.MustCompile(`(?s)<figure class="chart" id="([a-z-]+)">(.*?)</figure>`).FindAllStringSubmatch(html, -1) {
		out[f[1]] = strings.Count(f[2], `class="mark"`)
	}
	return out
}

// paletteColoursIn counts the report palette's colours that fill at least
// 50 pixels of a PNG.
func paletteColoursIn(t *testing.T, path string) int {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("no screenshot: %v", err)
	}
	img, err := png.Decode(bytes.NewReader(data))
	if err != nil {
		t.Fatalf("screenshot: %v", err)
	}
	want := map[string]int{}
	for _, c := range []string{"#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f", "#edc948", "#b07aa1", "#ff9da7", "#9c755f", "#2a5d9f"} {
		want[c] = 0
	}
	b := img.Bounds()
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			r, g, bl, _ := img.At(x, y).RGBA()
			key := fmt.Sprintf("#%02x%02x%02x", r>>8, g>>8, bl>>8)
			if n, ok := want[key]; ok {
				want[key] = n + 1
			}
		}
	}
	n := 0
	for _, c := range want {
		if c >= 50 {
			n++
		}
	}
	return n
}
