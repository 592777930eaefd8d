package report

import (
	"fmt"
	"html"
	"math"
	"strconv"
	"strings"
)

// This file holds the SVG primitives report.html is drawn with: a builder
// that writes elements with fixed number formatting (one decimal, so the
// same data gives the same bytes), linear scales and "nice" axis ticks.

// svgDoc accumulates the elements of one <svg>.
type svgDoc struct {
	b    strings.Builder
	w, h float64
}

func newSVG(w, h float64, label string) *svgDoc {
	s := &svgDoc{w: w, h: h}
	fmt.Fprintf(&s.b, `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 %s %s" width="%s" height="%s" role="img" aria-label="%s">`,
		n1(w), n1(h), n1(w), n1(h), esc(label))
	s.b.WriteByte('\n')
	return s
}

func (s *svgDoc) String() string { return s.b.String() + "</svg>\n" }

// n1 formats a coordinate with at most one decimal ("12", "12.5").
func n1(v float64) string {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return "0"
	}
	r := math.Round(v*10) / 10
	if r == 0 {
		r = 0 // no "-0"
	}
	return strconv.FormatFloat(r, 'f', -1, 64)
}

func esc(s string) string { return html.EscapeString(s) }

// attrs renders extra attributes: pairs of name and value.
func attrs(kv []string) string {
	var b strings.Builder
	for i := 0; i+1 < len(kv); i += 2 {
		if kv[i+1] == "" {
			continue
		}
		fmt.Fprintf(&b, ` %s="%s"`, kv[i], esc(kv[i+1]))
	}
	return b.String()
}

// open writes an element with a <title> (a native tooltip) when title is
// set, or a self-closed one.
func (s *svgDoc) elem(tag, geom, title string, kv ...string) {
	if title == "" {
		fmt.Fprintf(&s.b, "<%s %s%s/>\n", tag, geom, attrs(kv))
		return
	}
	fmt.Fprintf(&s.b, "<%s %s%s><title>%s</title></%s>\n", tag, geom, attrs(kv), esc(title), tag)
}

func (s *svgDoc) rect(x, y, w, h float64, title string, kv ...string) {
	if h < 0 {
		y, h = y+h, -h
	}
	s.elem("rect", fmt.Sprintf(`x="%s" y="%s" width="%s" height="%s"`, n1(x), n1(y), n1(max(w, 0)), n1(h)), title, kv...)
}

func (s *svgDoc) line(x1, y1, x2, y2 float64, kv ...string) {
	s.elem("line", fmt.Sprintf(`x1="%s" y1="%s" x2="%s" y2="%s"`, n1(x1), n1(y1), n1(x2), n1(y2)), "", kv...)
}

func (s *svgDoc) circle(x, y, r float64, title string, kv ...string) {
	s.elem("circle", fmt.Sprintf(`cx="%s" cy="%s" r="%s"`, n1(x), n1(y), n1(r)), title, kv...)
}

// path draws a polyline through points; a NaN y breaks the line.
func (s *svgDoc) path(xs, ys []float64, title string, kv ...string) {
	var d strings.Builder
	pen := false
	for i := range xs {
		if math.IsNaN(ys[i]) {
			pen = false
			continue
		}
		if pen {
			d.WriteString("L")
		} else {
			if d.Len() > 0 {
				d.WriteByte(' ')
			}
			d.WriteString("M")
		}
		d.WriteString(n1(xs[i]) + " " + n1(ys[i]))
		pen = true
	}
	if d.Len() == 0 {
		return
	}
	s.elem("path", `d="`+d.String()+`" fill="none"`, title, kv...)
}

// text writes a label; anchor is start, middle or end.
func (s *svgDoc) text(x, y float64, anchor, label string, kv ...string) {
	fmt.Fprintf(&s.b, `<text x="%s" y="%s" text-anchor="%s"%s>%s</text>`+"\n", n1(x), n1(y), anchor, attrs(kv), esc(label))
}

// raw writes markup as is (a group open or close).
func (s *svgDoc) raw(m string) { s.b.WriteString(m + "\n") }

// scale maps a data interval onto a pixel interval.
type scale struct{ d0, d1, r0, r1 float64 }

func (c scale) at(v float64) float64 {
	if c.d1 == c.d0 {
		return c.r0
	}
	return c.r0 + (v-c.d0)/(c.d1-c.d0)*(c.r1-c.r0)
}

// niceStep returns a step of 1, 2 or 5 × 10^k that cuts span into about n
// intervals.
func niceStep(span float64, n int) float64 {
	if span <= 0 || n <= 0 {
		return 1
	}
	raw := span / float64(n)
	p := math.Pow(10, math.Floor(math.Log10(raw)))
	for _, m := range []float64{1, 2, 5, 10} {
		if m*p >= raw {
			return m * p
		}
	}
	return 10 * p
}

// ticks returns the multiples of a nice step in [0, hi], and the axis top
// (hi rounded up to a step).
func ticks(hi float64, n int) ([]float64, float64) {
	if hi <= 0 {
		hi = 1
	}
	step := niceStep(hi, n)
	top := math.Ceil(hi/step-1e-9) * step
	var out []float64
	for v := 0.0; v <= top+step/2; v += step {
		out = append(out, math.Round(v/step)*step)
	}
	return out, top
}

// compact formats a token count for an axis: 950, 12k, 1.5M.
func compact(v float64) string {
	switch a := math.Abs(v); {
	case a >= 1e6:
		return trimZero(strconv.FormatFloat(v/1e6, 'f', 1, 64)) + "M"
	case a >= 1e3:
		return trimZero(strconv.FormatFloat(v/1e3, 'f', 1, 64)) + "k"
	}
	return strconv.FormatFloat(v, 'f', 0, 64)
}

func trimZero(s string) string { return strings.TrimSuffix(s, ".0") }

// palette colours series; strategies and rulers keep their index's colour
// whichever of them a run has.
var palette = []string{"#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f", "#edc948", "#b07aa1", "#ff9da7", "#9c755f", "#bab0ac", "#1b9e77", "#7570b3", "#d95f02"}

func colour(i int) string { return palette[i%len(palette)] }
