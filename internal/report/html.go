package report

import (
	"fmt"
	"io"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/compactbench/compactbench/internal/aggregate"
	"github.com/compactbench/compactbench/internal/analysis"
	"github.com/compactbench/compactbench/internal/compaction"
	"github.com/compactbench/compactbench/internal/figures"
	"github.com/compactbench/compactbench/internal/tokens"
)

// WriteHTML writes report.html: one self-contained page (inline CSS, inline
// SVG charts drawn here, a few lines of script for legend toggles; nothing
// fetched) with the tables of report.md and five charts: need recall against
// compression per strategy, the distribution of compression ratios per
// strategy, one transcript's context size over its calls with each
// strategy's compactions, anchors per rule, and the rulers' error
// distributions. Every data-bearing chart element has class "mark". The
// output depends only on the arguments.
func WriteHTML(w io.Writer, s *Summary, d *ReportData) error {
	return writeHTML(w, s, d, contextChartHTML(d))
}

// contextChartHTML is the context section's chart, which depends only on
// the report data (not on the finished summary): Writer renders it while
// the summary is being finished.
func contextChartHTML(d *ReportData) []byte {
	return appendContextChart(nil, d)
}

// writeHTML is WriteHTML with the context chart rendered.
func writeHTML(w io.Writer, s *Summary, d *ReportData, chart []byte) error {
	b := &strings.Builder{}
	b.Grow(len(chart) + 128<<10) // the rest of the page is smaller (some 60 kB on a real corpus)
	b.WriteString(htmlHead)
	b.WriteString("<header>\n<h1>compactbench report</h1>\n")
	if v := s.Verdict; len(v.Ranked)+len(v.Others) > 0 {
		b.WriteString("<section id=\"verdict\">\n<h2>Verdict</h2>\n")
		verdictHTML(b, s)
		b.WriteString("</section>\n")
	}
	htmlTable(b, []string{"run", ""}, runMeta(s, d, func(x string) string { return x }), "meta")
	b.WriteString("</header>\n<nav><a href=\"#verdict\">Verdict</a> <a href=\"#strategies\">Strategies</a> <a href=\"#context\">Context over a session</a> " +
		"<a href=\"#anchors\">Anchors</a> <a href=\"#rulers\">Token rulers</a> <a href=\"#corpus\">Corpus</a> <a href=\"#caveats\">Caveats</a></nav>\n")
	htmlStrategies(b, s)
	b.WriteString("<section id=\"context\">\n<h2>Context over a session</h2>\n")
	b.Write(chart)
	b.WriteString("</section>\n")
	htmlAnchorsAndRulers(b, s)
	htmlCorpus(b, s, d)
	b.WriteString("<section id=\"caveats\">\n<h2>Caveats</h2>\n<ul>\n")
	for _, c := range caveats(s, d) {
		b.WriteString("<li>" + esc(c) + "</li>\n")
	}
	b.WriteString("</ul>\n</section>\n")
	b.WriteString(htmlScript)
	b.WriteString("</body>\n</html>\n")
	_, err := io.WriteString(w, b.String())
	return err
}

// htmlStrategies writes the strategies section: the tradeoff and
// compression charts and the strategy table.
func htmlStrategies(b *strings.Builder, s *Summary) {
	b.WriteString("<section id=\"strategies\">\n<h2>Strategies</h2>\n")
	tradeoffChart(b, s)
	compressionChart(b, s)
	if h, rows := strategyGrid(s); len(rows) > 0 {
		htmlTable(b, h, rows, "")
		b.WriteString("<p class=\"note\">" + esc(strategyLegend()) + "</p>\n")
		if line := rereadLine(s); line != "" {
			b.WriteString("<p>" + esc(line) + "</p>\n")
		}
	}
	b.WriteString("</section>\n")
}

// htmlAnchorsAndRulers writes the anchors and token-ruler sections.
func htmlAnchorsAndRulers(b *strings.Builder, s *Summary) {
	b.WriteString("<section id=\"anchors\">\n<h2>Anchors</h2>\n")
	anchorsChart(b, s)
	if len(s.Anchors) > 0 {
		h, rows := anchorsGrid(s)
		htmlTable(b, h, rows, "")
		b.WriteString("<p class=\"note\">" + esc(anchorsLegend) + "</p>\n")
	}
	b.WriteString("</section>\n")

	b.WriteString("<section id=\"rulers\">\n<h2>Token rulers</h2>\n")
	rulerChart(b, s)
	if h, rows := rulerGrid(s); len(rows) > 0 {
		htmlTable(b, h, rows, "")
		b.WriteString("<p class=\"note\">" + esc(rulersLegend) + "</p>\n")
	}
	if h, rows := breakdownGrid(s); len(rows) > 0 {
		b.WriteString("<h3>Ruler error by tokenizer, model family and content</h3>\n")
		htmlTable(b, h, rows, "")
		b.WriteString("<p class=\"note\">" + esc(breakdownLegend) + "</p>\n")
	}
	b.WriteString("</section>\n")
}

// htmlCorpus writes the corpus section with the input problems.
func htmlCorpus(b *strings.Builder, s *Summary, d *ReportData) {
	b.WriteString("<section id=\"corpus\">\n<h2>Corpus</h2>\n")
	h, rows := corpusGrid(s)
	htmlTable(b, h, rows, "")
	fmt.Fprintf(b, "<p class=\"note\">%d files read; %s.</p>\n", s.Corpus.Files, esc(formatsLine(s)))
	b.WriteString("<h3>Input problems</h3>\n")
	if s.Corpus.Problems == 0 {
		b.WriteString("<p>None: every line was read or ignored by type.</p>\n")
	} else {
		fmt.Fprintf(b, "<p>%d problems (rows of <code>problems</code>, with file and line); the most frequent kinds:</p>\n", s.Corpus.Problems)
		h, rows := problemsGrid(d)
		htmlTable(b, h, rows, "problems")
	}
	b.WriteString("</section>\n")
}

const htmlHead = `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>compactbench report</title>
<style>
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,"DejaVu Sans",sans-serif;color:#222;margin:0 auto;max-width:1040px;padding:0 20px 40px}
h1{font-size:24px;margin:20px 0 8px}h2{font-size:19px;margin:28px 0 8px;border-bottom:1px solid #ddd;padding-bottom:4px}h3{font-size:15px}
nav{position:sticky;top:0;background:#fff;padding:6px 0;border-bottom:1px solid #eee;z-index:1}nav a{margin-right:14px;color:#2a5d9f;text-decoration:none}
.scroll{overflow-x:auto}table{border-collapse:collapse;margin:8px 0;font-size:13px}th,td{padding:3px 7px;border-bottom:1px solid #e5e5e5;white-space:nowrap}
th{background:#f5f5f5;font-weight:600;white-space:normal;vertical-align:bottom}td{text-align:right;font-variant-numeric:tabular-nums}td:first-child,th:first-child{text-align:left}
table.meta td{text-align:left;white-space:normal}table.problems td:nth-child(2),table.problems td:nth-child(3){text-align:left;white-space:normal}
figure{margin:16px 0}figcaption{color:#555;font-size:13px;max-width:900px}.note{color:#555;font-size:13px;max-width:900px}
svg{display:block;max-width:100%;height:auto}svg text{font-size:11px;fill:#333}svg .axis{stroke:#999}svg .grid{stroke:#eee}
svg .title{font-weight:600;font-size:12px}svg .muted{fill:#888}svg .low{fill:#fbeaea}svg .front{stroke:#888;stroke-dasharray:4 3;fill:none}
.legend{list-style:none;padding:0;margin:6px 0;display:flex;flex-wrap:wrap;gap:4px 14px;font-size:13px}
.legend button{border:0;background:none;cursor:pointer;font:inherit;padding:0;color:#222}.legend .sw{display:inline-block;width:18px;height:4px;vertical-align:middle;margin-right:5px}
.legend li.off{opacity:.35}.off{display:none}
</style>
</head>
<body>
`

// htmlScript counts each chart's marks (data-marks, read by the browser
// test), records script errors (data-errors) and lets legend entries hide
// and show their series.
const htmlScript = `<script>
(function(){
var root=document.documentElement,errs=[];
window.addEventListener('error',function(e){errs.push(String(e.message));root.setAttribute('data-errors',errs.join('; '));});
document.querySelectorAll('figure.chart').forEach(function(f){f.setAttribute('data-marks',String(f.querySelectorAll('.mark').length));});
document.querySelectorAll('.legend button[data-s]').forEach(function(btn){
btn.addEventListener('click',function(){
var fig=btn.closest('figure'),id=btn.getAttribute('data-s'),li=btn.parentNode,off=!li.classList.contains('off');
li.classList.toggle('off',off);
fig.querySelectorAll('svg [data-s="'+id+'"]').forEach(function(el){el.classList.toggle('off',off);});
});});
document.querySelectorAll('select.ctx-pick').forEach(function(sel){
sel.addEventListener('change',function(){
sel.closest('figure').querySelectorAll('div.ctx').forEach(function(d){d.hidden=d.getAttribute('data-i')!==sel.value;});
});});
root.setAttribute('data-ready','1');
})();
</script>
`

// htmlTable writes a table; cells are escaped.
func htmlTable(b *strings.Builder, header []string, rows [][]string, class string) {
	if class != "" {
		b.WriteString(`<div class="scroll"><table class="` + class + `">`)
	} else {
		b.WriteString(`<div class="scroll"><table>`)
	}
	b.WriteString("\n<thead><tr>")
	for _, h := range header {
		b.WriteString("<th>" + esc(h) + "</th>")
	}
	b.WriteString("</tr></thead>\n<tbody>\n")
	for _, r := range rows {
		b.WriteString("<tr>")
		for _, c := range r {
			b.WriteString("<td>" + esc(c) + "</td>")
		}
		b.WriteString("</tr>\n")
	}
	b.WriteString("</tbody>\n</table></div>\n")
}

// figure wraps a chart: the svg, then an optional HTML legend, then the
// caption.
func figure(b *strings.Builder, id, svg, legend, caption string) {
	// Written piece by piece: through fmt, a chart of several hundred kB
	// was copied into a printer buffer grown for it on every call.
	const open, mid, end = "<figure class=\"chart\" id=\"", "\">\n", "<figcaption>"
	const tail = "</figcaption>\n</figure>\n"
	b.Grow(len(open) + len(id) + len(mid) + len(svg) + len(legend) + len(end) + len(caption) + len(tail))
	for _, s := range [...]string{open, id, mid, svg, legend, end, caption, tail} {
		b.WriteString(s)
	}
}

// noData is a figure for a chart without data.
func noData(b *strings.Builder, id, title, why string) {
	fmt.Fprintf(b, "<figure class=\"chart empty\" id=\"%s\">\n<figcaption><b>%s</b>: %s</figcaption>\n</figure>\n", id, esc(title), esc(why))
}

// strategyIndex is a strategy's position in compaction.Specs (its colour).
func strategyIndex(id string) int {
	for i, s := range compaction.Specs() {
		if s.ID == id {
			return i
		}
	}
	return len(palette) - 1
}

// tradeoffChart: one point per strategy, median compression against pooled
// need recall, with the strategies no other beats on both joined.
func tradeoffChart(b *strings.Builder, s *Summary) {
	pts, missing := tradeoffPoints(s)
	const title = "Need recall against compression"
	if len(pts) == 0 {
		noData(b, "tradeoff", title, "no strategy compacted with facts to recall")
		return
	}
	const W, H, L, R, T, B = 680.0, 400.0, 56.0, 170.0, 16.0, 44.0
	xs, ys := scale{0, 1, L, W - R}, scale{0, 1, H - B, T}
	g := newSVG(W, H, title)
	for _, v := range []float64{0, 0.2, 0.4, 0.6, 0.8, 1} {
		g.line(xs.at(v), T, xs.at(v), H-B, "class", "grid")
		g.line(L, ys.at(v), W-R, ys.at(v), "class", "grid")
		g.text(xs.at(v), H-B+16, "middle", pctLabel(v))
		g.text(L-6, ys.at(v)+4, "end", pctLabel(v))
	}
	g.line(L, H-B, W-R, H-B, "class", "axis")
	g.line(L, T, L, H-B, "class", "axis")
	g.text((L+W-R)/2, H-8, "middle", "median compression ratio of events →")
	g.raw(fmt.Sprintf(`<text transform="translate(14 %s) rotate(-90)" text-anchor="middle">need recall (facts kept / facts needed later) →</text>`, n1((T+H-B)/2)))
	if front := tradeoffFront(pts); len(front) > 1 {
		fx, fy := make([]float64, len(front)), make([]float64, len(front))
		for i, p := range front {
			fx[i], fy[i] = xs.at(p.x), ys.at(p.y)
		}
		g.path(fx, fy, "", "class", "front")
	}
	tradeoffMarks(g, pts, xs, ys)
	caption := "<b>" + title + "</b>, one point per strategy: further right compresses more, higher keeps more of the facts " +
		"(paths, identifiers, errors, commands, constraints) that the session used again after the compaction. " +
		"The dashed line joins the strategies no other beats on both, among those that kept every session inside its " +
		"window with valid requests; a strategy that overflowed anywhere is off it. Need recall is pooled over " +
		"compactions, compression is the median per compaction."
	if len(missing) > 0 {
		caption += " Not shown (no compaction, or no fact to recall): " + esc(strings.Join(missing, ", ")) + "."
	}
	figure(b, "tradeoff", g.String(), "", caption)
}

// tradeoffPoint is a strategy in the tradeoff chart.
type tradeoffPoint struct {
	id   string
	x, y float64
	st   *StrategyStats
}

// tradeoffPoints are the strategies with both figures, in Specs order, and
// the ids of those without.
func tradeoffPoints(s *Summary) (pts []tradeoffPoint, missing []string) {
	for _, spec := range compaction.Specs() {
		st := s.Strategies[spec.ID]
		if st == nil {
			continue
		}
		x, y := st.Value(figures.MedianCompression), st.Value(figures.NeedRecall)
		if x == nil || y == nil {
			missing = append(missing, spec.ID)
			continue
		}
		pts = append(pts, tradeoffPoint{spec.ID, *x, *y, st})
	}
	return pts, missing
}

// tradeoffFront is the points no other point beats on both axes, among the
// strategies that kept every session inside its window with valid requests
// (one that overflows anywhere is off the front), left to right.
func tradeoffFront(pts []tradeoffPoint) []tradeoffPoint {
	var front []tradeoffPoint
	for _, p := range pts {
		if !fitsEverywhere(p.st) {
			continue
		}
		dominated := false
		for _, q := range pts {
			if fitsEverywhere(q.st) && q.x >= p.x && q.y >= p.y && (q.x > p.x || q.y > p.y) {
				dominated = true
			}
		}
		if !dominated {
			front = append(front, p)
		}
	}
	sort.SliceStable(front, func(i, j int) bool { return front[i].x < front[j].x })
	return front
}

// pointLabel is a label placed right of a point at height y.
type pointLabel struct {
	text      string
	px, py, y float64
}

// tradeoffMarks draws the points with their tooltips and labels: one label
// per position (strategies with equal figures share it), to the right of
// the point; overlapping labels are pushed apart and get a leader line when
// they moved.
func tradeoffMarks(g *svgDoc, pts []tradeoffPoint, xs, ys scale) {
	var labs []*pointLabel
	for _, p := range pts {
		st := p.st
		tip := fmt.Sprintf("%s: median compression %s, need recall %s (%d of %d facts), %d compactions, cost ratio %s",
			p.id, pct(st.Value(figures.MedianCompression)), pct(st.Value(figures.NeedRecall)), st.Count(figures.NeedKept),
			st.Count(figures.NeedFacts), st.Count(figures.Compactions), ratio(st.Value(figures.CostRatio)))
		g.circle(xs.at(p.x), ys.at(p.y), 5.5, tip, "class", "mark", "fill", colour(strategyIndex(p.id)), "stroke", "#fff")
		var near *pointLabel // a label already at (within 3 px of) this point
		for _, l := range labs {
			if math.Abs(l.px-xs.at(p.x)) <= 3 && math.Abs(l.py-ys.at(p.y)) <= 3 {
				near = l
				break
			}
		}
		if near != nil {
			near.text += ", " + p.id
			continue
		}
		labs = append(labs, &pointLabel{text: p.id, px: xs.at(p.x), py: ys.at(p.y), y: ys.at(p.y) + 4})
	}
	spreadLabels(labs)
	for _, l := range labs {
		if math.Abs(l.y-4-l.py) > 6 {
			g.line(l.px+5, l.py, l.px+9, l.y-4, "stroke", "#aaa")
		}
		g.text(l.px+10, l.y, "start", l.text)
	}
}

// spreadLabels pushes apart labels closer than 13 px in height (and 110 px
// across), at most 60 rounds.
func spreadLabels(labs []*pointLabel) {
	for iter := 0; iter < 60; iter++ {
		moved := false
		for i := range labs {
			for j := i + 1; j < len(labs); j++ {
				a, c := labs[i], labs[j]
				if math.Abs(a.px-c.px) > 110 || math.Abs(a.y-c.y) >= 13 {
					continue
				}
				push := (13 - math.Abs(a.y-c.y)) / 2
				if a.y < c.y || (a.y == c.y && i < j) {
					a.y, c.y = a.y-push, c.y+push
				} else {
					a.y, c.y = a.y+push, c.y-push
				}
				moved = true
			}
		}
		if !moved {
			break
		}
	}
}

// compressionChart: small multiples, one histogram of event compression
// ratios per strategy, with the low-compression zone (< 60 %) shaded.
func compressionChart(b *strings.Builder, s *Summary) {
	var ids []string
	var hists []*Histogram
	for _, spec := range compaction.Specs() {
		if h := aggregate.CompressionHistogram(s.Strategies[spec.ID]); h != nil && h.Total() > 0 {
			ids, hists = append(ids, spec.ID), append(hists, h)
		}
	}
	const title = "Compression ratio of events, per strategy"
	if len(ids) == 0 {
		noData(b, "compression", title, "no compaction events")
		return
	}
	const cols, gap = 4, 10.0
	rows := (len(ids) + cols - 1) / cols
	W, H := cols*(panelW+gap), float64(rows)*(panelH+gap)
	g := newSVG(W, H, title)
	for i, id := range ids {
		compressionPanel(g, s, id, hists[i], float64(i%cols)*(panelW+gap), float64(i/cols)*(panelH+gap))
	}
	figure(b, "compression", g.String(), "", "<b>"+title+"</b>: (tokens before − after) / before for every compaction, "+
		"as a share of the strategy's events in 5 % bins; each panel has its own vertical scale (hover a bar for its share). The shaded zone is low "+
		"compression (< 60 %, BR-005); a grey bar at <0 counts compactions that made the context larger.")
}

// panelW and panelH are the size of one compression panel.
const panelW, panelH = 232.0, 150.0

// compressionPanel draws one strategy's histogram with its top-left corner
// at (ox, oy): the shaded low zone, the title and median, a bar per bin,
// a grey bar for events that grew the context, and the axis.
func compressionPanel(g *svgDoc, s *Summary, id string, h *Histogram, ox, oy float64) {
	const L, R, T, B = 8.0, 10.0, 38.0, 20.0
	under := 0.0
	if h.Under > 0 {
		under = 20
	}
	xs := scale{0, 1, ox + L + under, ox + panelW - R}
	total := float64(h.Total())
	top := float64(h.Under)
	for _, c := range h.Counts {
		top = max(top, float64(c))
	}
	ys := scale{0, top / total, oy + panelH - B, oy + T}
	g.rect(xs.at(0), oy+T, xs.at(0.6)-xs.at(0), panelH-B-T, "", "class", "low")
	g.text(ox+L, oy+13, "start", id, "class", "title")
	g.text(ox+L, oy+27, "start", fmt.Sprintf("%s · median %s", plural(int(h.Total()), "event"),
		pct(s.Strategies[id].Value(figures.MedianCompression))), "class", "muted")
	col := colour(strategyIndex(id))
	bw := xs.at(h.Width()) - xs.at(0)
	for k, c := range h.Counts {
		if c == 0 {
			continue
		}
		lo := h.Lo + float64(k)*h.Width()
		tip := fmt.Sprintf("%s: %d events (%s) with ratio in [%s, %s)", id, c, pctOf(c, h.Total()), pctLabel(lo), pctLabel(lo+h.Width()))
		g.rect(xs.at(lo)+0.5, ys.at(float64(c)/total), bw-1, ys.at(0)-ys.at(float64(c)/total), tip, "class", "mark", "fill", col)
	}
	labels := []float64{0, 0.6, 1}
	if h.Under > 0 {
		x0 := ox + L
		tip := fmt.Sprintf("%s: %d events (%s) grew the context (ratio < 0)", id, h.Under, pctOf(h.Under, h.Total()))
		g.rect(x0, ys.at(float64(h.Under)/total), under-6, ys.at(0)-ys.at(float64(h.Under)/total), tip, "class", "mark", "fill", "#999")
		g.text(x0+(under-6)/2, oy+panelH-B+13, "middle", "<0")
		labels = labels[1:]
	}
	g.line(ox+L, oy+panelH-B, ox+panelW-R, oy+panelH-B, "class", "axis")
	for _, v := range labels {
		g.text(xs.at(v), oy+panelH-B+13, "middle", pctLabel(v))
	}
}

func pctOf(n, of int64) string {
	if of == 0 {
		return "-"
	}
	return strconv.FormatFloat(100*float64(n)/float64(of), 'f', 1, 64) + "%"
}

// contextChart: the chosen transcript's real context and each strategy's
// simulated prompt at every call, compactions marked, the window dashed.
func contextChart(b *strings.Builder, d *ReportData) {
	b.Write(appendContextChart(nil, d))
}

// appendContextChart appends contextChart's figure to out. The figure is
// written straight into out, in figure's order (the sessions' charts, the
// legend, the caption), with no string per chart: a run's context charts
// are most of report.html.
func appendContextChart(out []byte, d *ReportData) []byte {
	const title = "Context size over the calls of a session"
	cs := d.Series
	if cs == nil || cs.Calls() == 0 {
		var b strings.Builder
		noData(&b, "context", title, "no replayed transcript")
		return append(out, b.String()...)
	}
	// The sessions offered: the chosen one first, then the largest others.
	list := []*analysis.ContextSeries{cs}
	for _, o := range d.Sessions {
		if o != cs && o.Calls() > 0 {
			list = append(list, o)
		}
	}
	out = slices.Grow(out, contextChartSize(list))
	out = append(out, "<figure class=\"chart\" id=\"context\">\n"...)
	if len(list) > 1 {
		out = append(out, `<p class="pick"><label>Session: <select class="ctx-pick">`+"\n"...)
		for i, o := range list {
			out = fmt.Appendf(out, "<option value=\"%d\">%s (%s, %d calls, peak %s)</option>\n", i, esc(o.TranscriptID),
				esc(o.Kind), o.Calls(), compact(float64(o.PeakReal)))
		}
		out = append(out, "</select></label></p>\n"...)
	}
	for i, o := range list {
		hidden := ""
		if i > 0 {
			hidden = " hidden"
		}
		out = fmt.Appendf(out, "<div class=\"ctx\" data-i=\"%d\"%s>\n", i, hidden)
		var counts string
		out, counts = appendContextSVG(out, o, title)
		out = fmt.Appendf(out, "<p class=\"note\"><code>%s</code> (%s; %s, %d calls, model %s, peak recorded context %s). Compactions: %s.</p>\n</div>\n",
			esc(o.TranscriptID), esc(o.Path), esc(o.Kind), o.Calls(), esc(o.Model), compact(float64(o.PeakReal)), esc(counts))
	}
	out = append(out, "<ul class=\"legend\">\n"...)
	out = append(out, `<li><button data-s="recorded-real"><span class="sw" style="background:#222;opacity:.35;height:6px"></span>real context (recorded usage)</button></li>`+"\n"...)
	for _, ss := range cs.Strategies {
		out = fmt.Appendf(out, `<li><button data-s="%s"><span class="sw" style="background:%s"></span>%s</button></li>`+"\n",
			esc(ss.Strategy), colour(strategyIndex(ss.Strategy)), esc(ss.Strategy))
	}
	out = append(out, "</ul>\n"...)
	how := "the largest main session (by peak recorded context)"
	if d.Want != "" {
		if d.WantFound {
			how = "asked for with --report-transcript"
		} else {
			how = "the largest main session (--report-transcript " + esc(d.Want) + " matched no replayed transcript)"
		}
	}
	out = fmt.Appendf(out, "<figcaption><b>%s</b>: shown first is %s; the selector offers the %d largest replayed transcripts. "+
		"Each line is the prompt a strategy would have sent before every recorded call, overhead included; dots are its "+
		"compactions (hover for the trigger reason and the tokens before and after); the grey band is what the recording "+
		"really sent; the dashed red line is the window. Click a legend entry to hide or show its line.", title, how, len(list))
	return append(out, "</figcaption>\n</figure>\n"...)
}

// contextChartSize is about the bytes of the context charts of list (a
// little more, as a rule): the buffer is made once, not doubled along.
func contextChartSize(list []*analysis.ContextSeries) int {
	n := 4096
	for _, cs := range list {
		n += 6144 + len(cs.Real)*14 // axes, notes; the recorded line
		for _, ss := range cs.Strategies {
			n += len(ss.Prompt)*14 + len(ss.Compactions)*200
			for _, r := range ss.Reasons {
				n += len(r)
			}
		}
	}
	return n
}

// appendContextSVG appends the <svg> of one transcript's context series to
// out, and says how many compactions each strategy made in it.
func appendContextSVG(out []byte, cs *analysis.ContextSeries, title string) ([]byte, string) {
	n := cs.Calls()
	hi, window := contextRange(cs)
	showWindow := window > 0 && window <= 1.5*hi
	if showWindow {
		hi = max(hi, window)
	}
	tks, top := ticks(hi*1.02, 6)
	const W, H, L, R, T, B = 960.0, 400.0, 58.0, 16.0, 14.0, 40.0
	xs, ys := scale{0, float64(max(n-1, 1)), L, W - R}, scale{0, top, H - B, T}
	g := svgAfter(out, W, H, title+": "+cs.TranscriptID)
	for _, v := range tks {
		g.line(L, ys.at(v), W-R, ys.at(v), "class", "grid")
		g.text(L-6, ys.at(v)+4, "end", compact(v))
	}
	xt, xtop := ticks(float64(max(n-1, 1)), 10)
	for _, v := range xt {
		if v > xtop || v > float64(n-1) && n > 1 {
			continue
		}
		g.text(xs.at(v), H-B+15, "middle", strconv.FormatFloat(v, 'f', 0, 64))
	}
	g.line(L, H-B, W-R, H-B, "class", "axis")
	g.line(L, T, L, H-B, "class", "axis")
	g.text((L+W-R)/2, H-6, "middle", "recorded API call →")
	if showWindow {
		g.line(L, ys.at(window), W-R, ys.at(window), "stroke", "#c0392b", "stroke-dasharray", "6 4")
		g.text(W-R-4, ys.at(window)-5, "end", "window "+compact(window), "fill", "#c0392b")
	}
	px := make([]float64, n)
	for i := range px {
		px[i] = xs.at(float64(i))
	}
	py := make([]float64, n) // scratch for each line's heights
	counts := contextRecorded(g, cs, px, py, ys)
	for _, ss := range cs.Strategies {
		contextStrategy(g, &ss, px, py, ys)
		counts = append(counts, ss.Strategy+" "+strconv.Itoa(len(ss.Compactions)))
	}
	return append(g.b, "</svg>\n"...), strings.Join(counts, ", ")
}

// contextRange is the largest context, recorded or simulated, and the
// largest window of the series.
func contextRange(cs *analysis.ContextSeries) (hi, window float64) {
	for _, v := range cs.Real {
		hi = max(hi, float64(v))
	}
	for _, ss := range cs.Strategies {
		for _, v := range ss.Prompt {
			hi = max(hi, float64(v))
		}
		window = max(window, float64(ss.Window))
	}
	return hi, window
}

// contextRecorded draws the recorded context (its heights in real, of
// px's length) and its unrecorded drops, and returns the drops' legend
// entry (if any).
func contextRecorded(g *svgDoc, cs *analysis.ContextSeries, px, real []float64, ys scale) []string {
	n := len(px)
	hasReal := false
	for i, v := range cs.Real {
		real[i] = math.NaN()
		if v >= 0 {
			real[i], hasReal = ys.at(float64(v)), true
		}
	}
	if hasReal {
		g.path(px, real, "recorded context (input + cache read + cache creation)", "class", "mark", "data-s", "recorded-real",
			"stroke", "#222", "stroke-width", "3", "stroke-opacity", "0.35")
	}
	var counts []string
	for _, k := range cs.Drops {
		if k < 0 || int(k) >= n || cs.Real[k] < 0 {
			continue
		}
		x, y := px[k], ys.at(float64(cs.Real[k]))
		tip := fmt.Sprintf("unrecorded drop before call %d: the real context fell to %s tokens with no compaction recorded", k, compact(float64(cs.Real[k])))
		g.raw(fmt.Sprintf(`<path class="mark" d="M%.1f %.1fl-5 -8h10z" fill="#8e44ad"><title>%s</title></path>`, x, y-2, esc(tip)))
	}
	if len(cs.Drops) > 0 {
		counts = append(counts, "▼ "+plural(len(cs.Drops), "unrecorded drop")+" (real context fell, no compaction recorded)")
	}
	return counts
}

// contextStrategy draws one strategy's simulated prompt (its heights in
// py, of px's length) and its compactions.
func contextStrategy(g *svgDoc, ss *analysis.StrategySeries, px, py []float64, ys scale) {
	n := len(px)
	col := colour(strategyIndex(ss.Strategy))
	for i, v := range ss.Prompt {
		py[i] = ys.at(float64(v))
	}
	clear(py[len(ss.Prompt):]) // a replay cut short: not the previous line's heights
	g.b = append(g.b, `<g data-s="`...)
	g.b = appendEsc(g.b, ss.Strategy)
	g.b = append(g.b, "\">\n"...)
	g.path(px, py, ss.Strategy+": simulated prompt", "class", "mark", "stroke", col, "stroke-width", "1.6")
	r := 3.0
	if len(ss.Compactions) > n/8 {
		r = 1.8 // a strategy that compacts at most calls: small dots
	}
	kv := [...]string{"class", "mark", "fill", col, "stroke", "#fff", "stroke-width", "0.6"}
	for k, c := range ss.Compactions {
		if c < 0 || int(c) >= n {
			continue
		}
		// A circle whose title is "STRATEGY: compaction before call C →
		// prompt N tokens (REASON)", escaped, written in place.
		g.open("circle")
		g.b = appendNum(g.b, "cx", px[c])
		g.b = appendNum(g.b, "cy", py[c])
		g.b = appendNum(g.b, "r", r)
		g.b = appendAttrs(g.b, kv[:])
		g.b = append(g.b, "><title>"...)
		g.b = appendEsc(g.b, ss.Strategy)
		g.b = append(g.b, ": compaction before call "...)
		g.b = strconv.AppendInt(g.b, int64(c), 10)
		g.b = append(g.b, " → prompt "...)
		g.b = appendCompact(g.b, float64(ss.Prompt[c]))
		g.b = append(g.b, " tokens"...)
		if k < len(ss.Reasons) {
			g.b = append(g.b, " ("...)
			g.b = appendEsc(g.b, ss.Reasons[k])
			g.b = append(g.b, ')')
		}
		g.b = append(g.b, "</title></circle>\n"...)
	}
	g.raw("</g>")
}

// anchorsChart: per rule set, each rule's matched turns (light) and fires
// (solid), with its precision and recall.
func anchorsChart(b *strings.Builder, s *Summary) {
	const title = "Anchors per rule"
	rules, top := chartedRules(s)
	if len(rules) == 0 {
		noData(b, "anchors-per-rule", title, "no anchor analysis in this run")
		return
	}
	if top == 0 {
		top = 1
	}
	const W, L, BW, RH = 960.0, 290.0, 360.0, 18.0
	H := float64(len(rules))*RH + 30
	xs := scale{0, top, L, L + BW}
	g := newSVG(W, H, title)
	y := 14.0
	for _, r := range rules {
		if r.Scope == "set" {
			g.text(4, y+9, "start", fmt.Sprintf("%s (threshold %s): %d anchors on %d turns", r.RuleSet, FormatFloat(r.Threshold), r.Fires, r.TurnsEvaluated), "class", "title")
		} else {
			ruleBar(g, &r, xs, y, RH, L, BW)
		}
		y += RH
	}
	figure(b, "anchors-per-rule", g.String(), "", "<b>"+title+"</b>: light bars count the turns where a rule's conditions "+
		"held, dark bars the turns where it fired (the first rule that holds and whose confidence reaches the set's "+
		"threshold wins the turn); the synthetic row is the fallback anchor. P and R are against gold labels when the "+
		"corpus has them, else against evidence labels.")
}

// chartedRules are the rules table's set, rule and synthetic rows, and the
// largest count a bar shows.
func chartedRules(s *Summary) (rules []analysis.RuleRow, top float64) {
	for _, r := range analysis.RuleRows(s.AnchorTally()) {
		if r.Scope == "rule" || r.Scope == "synthetic" || r.Scope == "set" {
			rules = append(rules, r)
			if r.Scope != "set" {
				top = max(top, float64(r.Fires))
				if r.Matches != nil {
					top = max(top, float64(*r.Matches))
				}
			}
		}
	}
	return rules, top
}

// ruleBar draws one rule's row at height y: its name, the turns its
// conditions held (light) and fired (dark), and the counts with its scores.
func ruleBar(g *svgDoc, r *analysis.RuleRow, xs scale, y, rowH, left, barW float64) {
	name := r.Rule
	if r.BelowThreshold {
		name += " (below threshold)"
	}
	g.text(left-8, y+9, "end", name, "class", ifTrue(r.BelowThreshold, "muted"))
	matches := int64(-1)
	if r.Matches != nil {
		matches = *r.Matches
		if matches > 0 {
			g.rect(xs.at(0), y, xs.at(float64(matches))-xs.at(0), rowH-5,
				fmt.Sprintf("%s/%s: conditions held on %d turns", r.RuleSet, r.Rule, matches), "class", "mark", "fill", "#c9d7ea")
		}
	}
	fill := "#2a5d9f"
	if r.Scope == "synthetic" {
		fill = "#b07aa1"
	}
	if r.Fires > 0 {
		g.rect(xs.at(0), y+3, xs.at(float64(r.Fires))-xs.at(0), rowH-11,
			fmt.Sprintf("%s/%s: fired on %d turns", r.RuleSet, r.Rule, r.Fires), "class", "mark", "fill", fill)
	}
	label := fmt.Sprintf("%d fired", r.Fires)
	if matches >= 0 {
		label += fmt.Sprintf(" / %d matched", matches)
	}
	if sc := ruleScores(*r); sc != "" {
		label += " · " + sc
	}
	g.text(left+barW+8, y+9, "start", label)
}

// ifTrue is s when cond holds, else "" (an attribute left out).
func ifTrue(cond bool, s string) string {
	if cond {
		return s
	}
	return ""
}

// ruleScores is "gold P 0.93 R 0.37" (or evidence) for a rules row that
// fired.
func ruleScores(r analysis.RuleRow) string {
	if r.Fires == 0 {
		return ""
	}
	if r.LabelledTurns > 0 && (r.TP+r.FP+r.FN) > 0 {
		return "gold P " + ratio(r.Precision) + " R " + ratio(r.Recall)
	}
	if r.EvidenceTurns > 0 && (r.EvidenceTP+r.EvidenceFP+r.EvidenceFN) > 0 {
		return "evidence P " + ratio(r.EvidencePrec) + " R " + ratio(r.EvidenceRecall)
	}
	return ""
}

// rulerChart: each ruler's distribution of signed call errors as a step
// line over [−50 %, +50 %).
func rulerChart(b *strings.Builder, s *Summary) {
	const title = "Token ruler error per recorded call"
	var names []string
	var hists []*Histogram
	top := 0.0
	for _, name := range tokens.Names() {
		h := s.Rulers.ErrorHistogram(name)
		if h == nil || h.Total() == 0 {
			continue
		}
		names, hists = append(names, name), append(hists, h)
		for _, c := range h.Counts {
			top = max(top, float64(c)/float64(h.Total()))
		}
	}
	if len(names) == 0 {
		noData(b, "ruler-errors", title, "no recorded call with usage to compare with")
		return
	}
	tks, ytop := ticks(top*1.05, 5)
	const W, H, L, R, T, B = 760.0, 320.0, 52.0, 16.0, 14.0, 40.0
	xs, ys := scale{-0.5, 0.5, L, W - R}, scale{0, ytop, H - B, T}
	g := newSVG(W, H, title)
	for _, v := range tks {
		g.line(L, ys.at(v), W-R, ys.at(v), "class", "grid")
		g.text(L-6, ys.at(v)+4, "end", pctLabel(v))
	}
	for _, v := range []float64{-0.5, -0.25, 0, 0.25, 0.5} {
		g.text(xs.at(v), H-B+15, "middle", pctLabel(v))
	}
	g.line(xs.at(0), T, xs.at(0), H-B, "class", "axis")
	g.line(L, H-B, W-R, H-B, "class", "axis")
	g.text((L+W-R)/2, H-6, "middle", "(estimate − real) / real context tokens →")
	var legend strings.Builder
	legend.WriteString("<ul class=\"legend\">\n")
	for i, name := range names {
		h := hists[i]
		col := rulerColours[i%len(rulerColours)]
		var px, py []float64
		total := float64(h.Total())
		for k, c := range h.Counts {
			lo := h.Lo + float64(k)*h.Width()
			y := ys.at(float64(c) / total)
			px = append(px, xs.at(lo), xs.at(lo+h.Width()))
			py = append(py, y, y)
		}
		g.path(px, py, fmt.Sprintf("%s: %d calls", name, h.Total()), "class", "mark", "data-s", name, "stroke", col, "stroke-width", "1.8")
		fmt.Fprintf(&legend, `<li><button data-s="%s"><span class="sw" style="background:%s"></span>%s (%d calls; %d below −50%%, %d above +50%%)</button></li>`+"\n",
			esc(name), col, esc(name), h.Total(), h.Under, h.Over)
	}
	legend.WriteString("</ul>\n")
	figure(b, "ruler-errors", g.String(), legend.String(), "<b>"+title+"</b>: share of calls per 2 % bin of the signed "+
		"error of each ruler's estimate of the context against the API's recorded count (calls whose overhead was "+
		"taken from them are left out). A narrow peak at 0 is a good ruler.")
}

// rulerColours tell the rulers apart in their chart.
var rulerColours = []string{"#4e79a7", "#f28e2b", "#b07aa1", "#59a14f", "#e15759"}

// fitsEverywhere: no session overflowed and no request was invalid.
func fitsEverywhere(st *StrategyStats) bool {
	return st.Count(figures.OverflowRuns) == 0 && st.Count(figures.OrphanResults)+st.Count(figures.DanglingCalls) == 0
}

// verdictHTML writes the verdict: the ranked strategies as an ordered list,
// the others with their reasons, and the ranking rule.
func verdictHTML(b *strings.Builder, s *Summary) {
	v := s.Verdict
	if v.Note != "" {
		fmt.Fprintf(b, "<p>%s Fit every session: %s.</p>\n", esc(v.Note), esc(strings.Join(lineIDs(v.Ranked), ", ")))
	} else if len(v.Ranked) == 0 {
		b.WriteString("<p>No strategy kept every session inside its window.</p>\n")
	} else {
		b.WriteString("<p>Kept every session inside its window, best first:</p>\n<ol class=\"verdict\">\n")
		for _, l := range v.Ranked {
			fmt.Fprintf(b, "<li><b>%s</b>: %s</li>\n", esc(l.Strategy), esc(l.Why))
		}
		b.WriteString("</ol>\n")
	}
	if len(v.Others) > 0 {
		b.WriteString("<p>Did not:</p>\n<ul class=\"verdict\">\n")
		for _, l := range v.Others {
			fmt.Fprintf(b, "<li><b>%s</b>: %s</li>\n", esc(l.Strategy), esc(l.Why))
		}
		b.WriteString("</ul>\n")
	}
	b.WriteString("<p class=\"note\">" + esc(RankingRule) + "</p>\n")
}
