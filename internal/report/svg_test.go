package report

import (
	"html"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
)

// n1Oracle is n1 as it was written before appendN1: round to tenths, then
// strconv's shortest form.
func n1Oracle(v float64) string {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return "0"
	}
	r := math.Round(v*10) / 10
	if r == 0 {
		r = 0
	}
	return strconv.FormatFloat(r, 'f', -1, 64)
}

// n1Cases are edge cases of appendN1: zeros, ties at the twentieths,
// values beside its switch to strconv, the extremes.
func n1Cases() []float64 {
	vs := []float64{0, math.Copysign(0, -1), 0.04, -0.04, 0.05, -0.05, 0.049999999999999996, 0.15, 0.25, -0.25, 0.95, 1.05,
		9.95, 99.95, 12, 12.34, 680, 968.5, -12.35, 1e13, 1e14 - 1, 1e14, 1e14 + 1, 1e13 - 0.05, 9999999999999.95, 1e15, 1e16, 1e17,
		1e21, 1e22, 1e300, -1e300, math.MaxFloat64, -math.MaxFloat64, math.SmallestNonzeroFloat64, 4.9e-324,
		math.NaN(), math.Inf(1), math.Inf(-1), 1 << 53, (1 << 53) + 1, 1 << 62, -(1 << 63)}
	for e := -3; e <= 22; e++ {
		p := math.Pow(10, float64(e))
		for _, m := range []float64{1, 1.5, 2.25, 5, 9.99, 9.95, 9.94999} {
			vs = append(vs, m*p, -m*p, math.Nextafter(m*p, 0), math.Nextafter(m*p, math.Inf(1)))
		}
	}
	return vs
}

func TestAppendN1(t *testing.T) {
	vs := n1Cases()
	rng := rand.New(rand.NewPCG(1, 2))
	for range 200000 {
		// coordinates, ties at the twentieths, and any magnitude
		vs = append(vs, rng.Float64()*2000-500, float64(rng.IntN(40000)-20000)/20, rng.NormFloat64()*math.Pow(10, float64(rng.IntN(40)-10)),
			math.Float64frombits(rng.Uint64()))
	}
	for _, v := range vs {
		if got, want := string(appendN1([]byte("x"), v)), "x"+n1Oracle(v); got != want {
			t.Fatalf("appendN1(%v) = %q, strconv gives %q", v, got, want)
		}
	}
}

func FuzzAppendN1(f *testing.F) {
	for _, v := range n1Cases() {
		f.Add(v)
	}
	f.Fuzz(func(t *testing.T, v float64) {
		if got, want := string(appendN1(nil, v)), n1Oracle(v); got != want {
			t.Fatalf("appendN1(%v) = %q, strconv gives %q", v, got, want)
		}
	})
}

func FuzzAppendEsc(f *testing.F) {
	for _, s := range []string{"", "plain", `a&b<c>d"e'f`, "&&", "é ✓ \x00", `"`, "<svg>"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := string(appendEsc([]byte("x"), s)), "x"+html.EscapeString(s); got != want {
			t.Fatalf("appendEsc(%q) = %q, html.EscapeString gives %q", s, got, want)
		}
	})
}

func TestSVGElements(t *testing.T) {
	var g svgDoc
	g.rect(1, 10, -3, -4.04, `a"b`, "class", "mark", "fill", "")
	g.line(0, 0.05, 1e15, -0.06)
	g.circle(5, 6, 1.8, "", "data-s", "<x>")
	g.text(2, 3, "end", "a & b", "class", "")
	g.path([]float64{1, 2}, []float64{math.NaN(), math.NaN()}, "none drawn")
	g.raw("<g>")
	want := `<rect x="1" y="6" width="0" height="4"` + ` class="mark"><title>a&#34;b</title></rect>` + "\n" +
		`<line x1="0" y1="0.1" x2="1000000000000000" y2="-0.1"/>` + "\n" +
		`<circle cx="5" cy="6" r="1.8" data-s="&lt;x&gt;"/>` + "\n" +
		`<text x="2" y="3" text-anchor="end">a &amp; b</text>` + "\n" +
		"<g>\n"
	if got := string(g.b); got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}

func TestAppendCompact(t *testing.T) {
	vs := append(n1Cases(), 950, 999.5, 999.49, 1000, 12000, 60000, 999_950, 999_949, 1e6, 1_540_000, 1_950_000, -1_050_000, -0.4)
	rng := rand.New(rand.NewPCG(3, 4))
	for range 100000 {
		vs = append(vs, float64(rng.IntN(5_000_000)), rng.Float64()*1e7, -rng.Float64()*1e4)
	}
	for _, v := range vs {
		if got, want := string(appendCompact([]byte("x"), v)), "x"+compactByStrings(v); got != want {
			t.Fatalf("appendCompact(%v) = %q, want %q", v, got, want)
		}
	}
}

// compactByStrings is compact as first written, with strings: the oracle
// of appendCompact.
func compactByStrings(v float64) string {
	trimZero := func(s string) string { return strings.TrimSuffix(s, ".0") }
	switch a := math.Abs(v); {
	case a >= 1e6:
		return trimZero(strconv.FormatFloat(v/1e6, 'f', 1, 64)) + "M"
	case a >= 1e3:
		return trimZero(strconv.FormatFloat(v/1e3, 'f', 1, 64)) + "k"
	}
	return strconv.FormatFloat(v, 'f', 0, 64)
}
