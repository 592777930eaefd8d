package report

import (
	"html"
	"math"
	"strconv"
	"strings"
)

// This file holds the SVG primitives report.html is drawn with: a builder
// that writes elements with fixed number formatting (one decimal, so the
// same data gives the same bytes), linear scales and "nice" axis ticks.

// svgDoc accumulates the elements of one <svg>. Every element is appended
// to b as bytes: a chart of a long session has tens of thousands of
// coordinates, which through fmt and a string each cost more than the rest
// of report.html.
type svgDoc struct {
	b    []byte
	w, h float64
}

func newSVG(w, h float64, label string) *svgDoc { return svgAfter(nil, w, h, label) }

// svgAfter starts an <svg> after the bytes of b (which then belong to the
// document): its caller appends the closing tag to the document's b
// itself, and never calls String.
func svgAfter(b []byte, w, h float64, label string) *svgDoc {
	s := &svgDoc{w: w, h: h}
	b = append(b, `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 `...)
	b = appendN1(b, w)
	b = append(b, ' ')
	b = appendN1(b, h)
	b = append(b, '"')
	b = appendNum(b, "width", w)
	b = appendNum(b, "height", h)
	b = append(b, ` role="img" aria-label="`...)
	b = appendEsc(b, label)
	s.b = append(b, "\">\n"...)
	return s
}

func (s *svgDoc) String() string { return string(s.appendTo(nil)) }

// appendTo appends the finished <svg> element to b.
func (s *svgDoc) appendTo(b []byte) []byte {
	return append(append(b, s.b...), "</svg>\n"...)
}

// n1 formats a coordinate with at most one decimal ("12", "12.5").
func n1(v float64) string { return string(appendN1(nil, v)) }

// appendN1 appends n1(v): v rounded to tenths, in FormatFloat's shortest
// form. Below 10¹³ in magnitude (every coordinate of a chart) the tenths
// are an integer k and the shortest form of k/10 is k's digits with a
// point before the last unless it is 0 (a double there is within 0.002 of
// k/10, so no other decimal of one place or fewer rounds to it); larger
// values go through strconv.
func appendN1(b []byte, v float64) []byte {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return append(b, '0')
	}
	t := math.Round(v * 10)
	if t == 0 {
		return append(b, '0') // no "-0"
	}
	if math.Abs(t) >= 1e14 {
		return strconv.AppendFloat(b, t/10, 'f', -1, 64)
	}
	k := int64(t)
	if k < 0 {
		b = append(b, '-')
		k = -k
	}
	b = strconv.AppendInt(b, k/10, 10)
	if d := k % 10; d != 0 {
		b = append(b, '.', byte('0'+d))
	}
	return b
}

// appendNum appends ` name="n1(v)"`.
func appendNum(b []byte, name string, v float64) []byte {
	b = append(b, ' ')
	b = append(b, name...)
	b = append(b, '=', '"')
	b = appendN1(b, v)
	return append(b, '"')
}

func esc(s string) string { return html.EscapeString(s) }

// appendEsc appends esc(s): the five characters html.EscapeString
// escapes, as it writes them.
func appendEsc(b []byte, s string) []byte {
	for {
		i := strings.IndexAny(s, `&'<>"`)
		if i < 0 {
			return append(b, s...)
		}
		b = append(b, s[:i]...)
		switch s[i] {
		case '&':
			b = append(b, "&amp;"...)
		case '\'':
			b = append(b, "&#39;"...)
		case '<':
			b = append(b, "&lt;"...)
		case '>':
			b = append(b, "&gt;"...)
		case '"':
			b = append(b, "&#34;"...)
		}
		s = s[i+1:]
	}
}

// appendAttrs appends extra attributes, pairs of name and value: ` name="value"` for each pair whose value
// is set, the value escaped.
func appendAttrs(b []byte, kv []string) []byte {
	for i := 0; i+1 < len(kv); i += 2 {
		if kv[i+1] == "" {
			continue
		}
		b = append(b, ' ')
		b = append(b, kv[i]...)
		b = append(b, '=', '"')
		b = appendEsc(b, kv[i+1])
		b = append(b, '"')
	}
	return b
}

// open starts an element: "<tag" (its geometry follows as attributes).
func (s *svgDoc) open(tag string) {
	s.b = append(append(s.b, '<'), tag...)
}

// close ends the element open started after its geometry: the extra
// attributes, then a <title> (a native tooltip) when title is set, or a
// self-close.
func (s *svgDoc) close(tag, title string, kv []string) {
	b := appendAttrs(s.b, kv)
	if title == "" {
		s.b = append(b, "/>\n"...)
		return
	}
	b = append(b, "><title>"...)
	b = appendEsc(b, title)
	b = append(b, "</title></"...)
	b = append(b, tag...)
	s.b = append(b, ">\n"...)
}

func (s *svgDoc) rect(x, y, w, h float64, title string, kv ...string) {
	if h < 0 {
		y, h = y+h, -h
	}
	s.open("rect")
	s.b = appendNum(s.b, "x", x)
	s.b = appendNum(s.b, "y", y)
	s.b = appendNum(s.b, "width", max(w, 0))
	s.b = appendNum(s.b, "height", h)
	s.close("rect", title, kv)
}

func (s *svgDoc) line(x1, y1, x2, y2 float64, kv ...string) {
	s.open("line")
	s.b = appendNum(s.b, "x1", x1)
	s.b = appendNum(s.b, "y1", y1)
	s.b = appendNum(s.b, "x2", x2)
	s.b = appendNum(s.b, "y2", y2)
	s.close("line", "", kv)
}

func (s *svgDoc) circle(x, y, r float64, title string, kv ...string) {
	s.open("circle")
	s.b = appendNum(s.b, "cx", x)
	s.b = appendNum(s.b, "cy", y)
	s.b = appendNum(s.b, "r", r)
	s.close("circle", title, kv)
}

// path draws a polyline through points; a NaN y breaks the line. Nothing
// is written when every y is NaN.
func (s *svgDoc) path(xs, ys []float64, title string, kv ...string) {
	mark := len(s.b)
	s.open("path")
	s.b = append(s.b, ` d="`...)
	d := len(s.b)
	pen := false
	for i := range xs {
		if math.IsNaN(ys[i]) {
			pen = false
			continue
		}
		if pen {
			s.b = append(s.b, 'L')
		} else {
			if len(s.b) > d {
				s.b = append(s.b, ' ')
			}
			s.b = append(s.b, 'M')
		}
		s.b = appendN1(s.b, xs[i])
		s.b = append(s.b, ' ')
		s.b = appendN1(s.b, ys[i])
		pen = true
	}
	if len(s.b) == d {
		s.b = s.b[:mark]
		return
	}
	s.b = append(s.b, `" fill="none"`...)
	s.close("path", title, kv)
}

// text writes a label; anchor is start, middle or end.
func (s *svgDoc) text(x, y float64, anchor, label string, kv ...string) {
	s.open("text")
	s.b = appendNum(s.b, "x", x)
	s.b = appendNum(s.b, "y", y)
	s.b = append(s.b, ` text-anchor="`...)
	s.b = append(s.b, anchor...)
	s.b = append(s.b, '"')
	s.b = appendAttrs(s.b, kv)
	s.b = append(s.b, '>')
	s.b = appendEsc(s.b, label)
	s.b = append(s.b, "</text>\n"...)
}

// raw writes markup as is (a group open or close).
func (s *svgDoc) raw(m string) { s.b = append(append(s.b, m...), '\n') }

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
func compact(v float64) string { return string(appendCompact(nil, v)) }

// appendCompact appends compact(v): a round number with k or M (one
// decimal, none when it is 0).
func appendCompact(b []byte, v float64) []byte {
	unit := byte(0)
	switch a := math.Abs(v); {
	case a >= 1e6:
		v, unit = v/1e6, 'M'
	case a >= 1e3:
		v, unit = v/1e3, 'k'
	default:
		return strconv.AppendFloat(b, v, 'f', 0, 64)
	}
	b = strconv.AppendFloat(b, v, 'f', 1, 64)
	if n := len(b); b[n-2] == '.' && b[n-1] == '0' {
		b = b[:n-2]
	}
	return append(b, unit)
}

// palette colours series; strategies and rulers keep their index's colour
// whichever of them a run has.
var palette = []string{"#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f", "#edc948", "#b07aa1", "#ff9da7", "#9c755f", "#bab0ac", "#1b9e77", "#7570b3", "#d95f02"}

func colour(i int) string { return palette[i%len(palette)] }
