package aggregate

import (
	"encoding/binary"
	"fmt"
	"hash"
	"hash/fnv"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/compactbench/compactbench/internal/analysis"
	"github.com/compactbench/compactbench/internal/orderstat"
	"github.com/compactbench/compactbench/internal/tempfile"
	"github.com/compactbench/compactbench/internal/tokens"
)

// RulerErrors are one ruler's error statistics in summary.json.
type RulerErrors struct {
	// Calls: every non-anchor call with a real context. Complete: those no
	// load problem precedes (their real context holds nothing the transcript
	// lost). PreTokens: recorded compactions, against the harness's own
	// count.
	Calls     tokens.ErrStats `json:"calls"`
	Complete  tokens.ErrStats `json:"complete_calls"`
	PreTokens tokens.ErrStats `json:"pre_tokens"`
}

// Rulers is the rulers section of summary.json: per ruler, median and p95 of
// |err| = |est − real| / real and how many calls they cover; the breakdowns
// of the complete calls' errors per tokenizer generation, model family and
// content class; and the calibrated ruler fitted on this corpus, measured in
// sample and cross-validated.
type Rulers struct {
	Overhead string                  `json:"overhead"`
	Measured map[string]*RulerErrors `json:"errors"`
	// ByTokenizer, ByFamily and ByContent map a group to each ruler's
	// errors on its complete non-anchor calls. A family is the model name
	// without its date suffix; a call's content class is the class that
	// grew its prompt most since its anchor (tokens.SampleClasses).
	ByTokenizer map[string]map[string]tokens.ErrStats `json:"by_tokenizer,omitempty"`
	ByFamily    map[string]map[string]tokens.ErrStats `json:"by_family,omitempty"`
	ByContent   map[string]map[string]tokens.ErrStats `json:"by_content,omitempty"`
	// Calibration is the calibrated ruler refitted on this corpus.
	Calibration *CalibrationFigures `json:"calibration,omitempty"`

	// The errors are not kept in memory: each call with an error appends a
	// record to log (its rulers' |err| and its groups), and finish selects
	// the order statistics every median and p95 needs from it (selectStats).
	// counts has the number of errors of each stream (one ruler's errors
	// over all calls, complete calls, compactions, or one group's complete
	// calls); calls, complete and pre are the streams of each ruler (by
	// its index in tokens.Names, -1 before its first error).
	log                  tempfile.Log
	counts               []int64
	calls, complete, pre []int
	groups               [nGroupKinds]groupStreams
	// hists bin each ruler's signed call errors for ErrorHistogram.
	hists []*Histogram
	// samples logs the calibration samples (encodeSample) for
	// crossValidate, which reads them twice; sampleGens are their
	// generations by id.
	samples     tempfile.Log
	nSamples    int
	sampleGens  groupStreams
	sampleCalls int
	models      *tokens.Models
	// memo keeps the calibration figures between runs (SetCalibrationMemo);
	// memoHash hashes the samples log for its key as it is written.
	memo     CalibrationMemo
	memoHash hash.Hash
	// refits counts the calibration refits (for tests: a memo hit makes
	// none).
	refits   int
	err      error
	finished bool
}

// spillMem is how many bytes each of the rulers' logs keeps in memory
// before it moves them to its temporary file (a variable for tests).
var spillMem = 1 << 20

// CalibrationFigures are the calibrated ruler's errors when fitted on the
// run's own corpus (per tokenizer generation, "all" for every call): in
// sample, and cross-validated by transcript (each transcript measured with
// factors fitted without its fold). The cross-validated figure is the one to
// expect on sessions like these that the fit never saw.
type CalibrationFigures struct {
	Folds int `json:"folds"`
	// Calls is how many calls the fit kept (at most 500,000, the first in
	// output order).
	Calls          int                        `json:"calls"`
	InSample       map[string]tokens.ErrStats `json:"in_sample"`
	CrossValidated map[string]tokens.ErrStats `json:"cross_validated"`
	// Notes name the generations that had no calls to fit on.
	Notes []string `json:"notes,omitempty"`
}

// cvFolds is the number of folds of the cross-validation by transcript.
const cvFolds = 10

// maxCVCalls bounds the calls kept for the cross-validation (the first in
// output order), so memory stays bounded on very large corpora.
const maxCVCalls = 500_000

func newRulers(overhead string, models *tokens.Models) *Rulers {
	n := len(tokens.Names())
	s := &Rulers{Overhead: overhead, Measured: map[string]*RulerErrors{}, models: models,
		calls: make([]int, n), complete: make([]int, n), pre: make([]int, n), hists: make([]*Histogram, n)}
	for i := range n {
		s.calls[i], s.complete[i], s.pre[i] = -1, -1, -1
	}
	for k := range s.groups {
		s.groups[k].ids = map[string]int{}
	}
	s.sampleGens.ids = map[string]int{}
	// The two logs' buffers are made at their full size once (with room
	// for the record that fills them): grown by append they were made
	// again at every doubling, some 4 MB of copies a run of the real
	// corpus. A small run pays for them unused: about 2 MB of heap, zeroed
	// when the memory is not fresh from the system.
	s.log.Buf = make([]byte, 0, spillMem+64<<10)
	s.samples.Buf = make([]byte, 0, spillMem+64<<10)
	return s
}

// The kinds of breakdown of the complete calls' errors.
const (
	byTokenizer = iota
	byFamily
	byContent
	nGroupKinds
)

// groupStreams are the groups of one kind of breakdown: their keys by id
// (ids count from 1; 0 is no group) and each group's stream per ruler.
type groupStreams struct {
	ids     map[string]int
	keys    []string
	streams [][]int
}

// id is the id of a group key, added on first sight.
func (g *groupStreams) id(key string) int {
	if id, ok := g.ids[key]; ok {
		return id
	}
	g.keys = append(g.keys, key)
	g.streams = append(g.streams, nil)
	g.ids[key] = len(g.keys)
	return len(g.keys)
}

// stream returns *slot, made a new stream first if it has none.
func (s *Rulers) stream(slot *int) int {
	if *slot < 0 {
		*slot = len(s.counts)
		s.counts = append(s.counts, 0)
	}
	return *slot
}

// groupStream is the stream of ruler ri in group id of a kind.
func (s *Rulers) groupStream(kind, id, ri int) int {
	g := &s.groups[kind]
	if g.streams[id-1] == nil {
		g.streams[id-1] = make([]int, len(s.calls))
		for i := range g.streams[id-1] {
			g.streams[id-1][i] = -1
		}
	}
	return s.stream(&g.streams[id-1][ri])
}

// A record of the log: recCall or recBoundary, a flags byte (recComplete),
// the mask of the rulers with an error (bit i: tokens.Names()[i]), a
// padding byte, the tokenizer, family and content class ids (uint32, 0
// for none; boundaries have none), then the |err| of each ruler of the
// mask in order (float64 bits), all little-endian.
const (
	recCall     = 0
	recBoundary = 1
	recComplete = 1
	recHeader   = 16
)

// streamsOf puts in out the streams a record's error of ruler ri belongs
// to (creating them on first sight) and returns how many.
func (s *Rulers) streamsOf(kind byte, complete bool, ids *[nGroupKinds]uint32, ri int, out *[3 + nGroupKinds]int) int {
	if kind == recBoundary {
		out[0] = s.stream(&s.pre[ri])
		return 1
	}
	out[0] = s.stream(&s.calls[ri])
	if !complete {
		return 1
	}
	out[1] = s.stream(&s.complete[ri])
	n := 2
	for k, id := range ids {
		if id > 0 {
			out[n] = s.groupStream(k, int(id), ri)
			n++
		}
	}
	return n
}

// record appends one record to the log and counts its errors; errs holds
// the signed error of each ruler of mask.
func (s *Rulers) record(kind byte, complete bool, ids *[nGroupKinds]uint32, mask byte, errs *[8]float64) {
	var flags byte
	if complete {
		flags = recComplete
	}
	b := append(s.log.Buf, kind, flags, mask, 0)
	for _, id := range ids {
		b = binary.LittleEndian.AppendUint32(b, id)
	}
	for ri := range s.calls {
		if mask&(1<<ri) == 0 {
			continue
		}
		b = binary.LittleEndian.AppendUint64(b, math.Float64bits(math.Abs(errs[ri])))
		var sts [3 + nGroupKinds]int
		for _, st := range sts[:s.streamsOf(kind, complete, ids, ri, &sts)] {
			s.counts[st]++
		}
	}
	s.log.Buf = b
	s.log.Flush(spillMem)
}

// scan reads the log back, calling fn with each error's stream and
// orderstat.Key.
func (s *Rulers) scan(fn func(stream int, key uint64)) error {
	r := s.log.Reader()
	var head [recHeader]byte
	var val [8]byte
	var ids [nGroupKinds]uint32
	var sts [3 + nGroupKinds]int
	for {
		if _, err := io.ReadFull(r, head[:]); err == io.EOF {
			return nil
		} else if err != nil {
			return fmt.Errorf("rulers: reading the spilled errors: %w", err)
		}
		for k := range ids {
			ids[k] = binary.LittleEndian.Uint32(head[4+4*k:])
		}
		complete := head[1]&recComplete != 0
		for ri := range s.calls {
			if head[2]&(1<<ri) == 0 {
				continue
			}
			if _, err := io.ReadFull(r, val[:]); err != nil {
				return fmt.Errorf("rulers: reading the spilled errors: %w", err)
			}
			key := orderstat.Key(math.Float64frombits(binary.LittleEndian.Uint64(val[:])))
			for _, st := range sts[:s.streamsOf(head[0], complete, &ids, ri, &sts)] {
				fn(st, key)
			}
		}
	}
}

// family is a model name without its date suffix (claude-opus-4-5-20251101
// → claude-opus-4-5).
func family(model string) string {
	if i := strings.LastIndexByte(model, '-'); i > 0 && len(model)-i == 9 {
		if _, err := strconv.Atoi(model[i+1:]); err == nil {
			return model[:i]
		}
	}
	if model == "" {
		return "(none)"
	}
	return model
}

func (s *Rulers) add(r *analysis.Result) {
	var errs [8]float64
	j := 0 // index of the next measured call in r.Classes
	for i := range r.Calls {
		c := &r.Calls[i]
		class := ""
		if c.Complete && !c.Anchor && c.RealContext != nil && *c.RealContext > 0 {
			if j < len(r.Classes) {
				class = r.Classes[j]
			}
			j++
		}
		var mask byte
		for ri := range tokens.NumRulers {
			if _, e := c.Slots(tokens.RulerID(ri)); *e != nil {
				mask |= 1 << ri
				errs[ri] = **e
				if s.hists[ri] == nil {
					s.hists[ri] = NewHistogram(-0.5, 0.5, 50)
				}
				s.hists[ri].Add(**e)
			}
		}
		if mask == 0 {
			continue
		}
		var ids [nGroupKinds]uint32
		if c.Complete {
			ids[byTokenizer] = uint32(s.groups[byTokenizer].id(c.Tokenizer))
			ids[byFamily] = uint32(s.groups[byFamily].id(family(c.Model)))
			if class != "" {
				ids[byContent] = uint32(s.groups[byContent].id(class))
			}
		}
		s.record(recCall, c.Complete, &ids, mask, &errs)
	}
	if r.Sample != nil && len(r.Sample.Calls) > 0 && s.sampleCalls+len(r.Sample.Calls) <= maxCVCalls {
		s.encodeSample(r.Sample)
		s.sampleCalls += len(r.Sample.Calls)
	}
	for i := range r.Boundaries {
		b := &r.Boundaries[i]
		var mask byte
		for ri := range tokens.NumRulers {
			if _, e := b.Slots(tokens.RulerID(ri)); *e != nil {
				mask |= 1 << ri
				errs[ri] = **e
			}
		}
		if mask != 0 {
			s.record(recBoundary, false, &[nGroupKinds]uint32{}, mask, &errs)
		}
	}
}

// Err reports a failure of finish to read back the errors it spilled to
// a temporary file (the rulers' figures are then incomplete).
func (s *Rulers) Err() error {
	if s == nil {
		return nil
	}
	return s.err
}

// finish computes the figures from the logs and releases them; it does
// nothing the second time (the logs are gone).
func (s *Rulers) finish() {
	if s.finished {
		return
	}
	s.finished = true
	defer s.samples.Close()
	// The calibration refit reads only the samples' log, the selection only
	// the errors' log: the refit runs beside the selection.
	var cal *CalibrationFigures
	var calErr error
	join := beside(func() { cal, calErr = s.crossValidate() })
	defer join() // before the samples' log is closed, also after a panic
	stats, err := s.streamStats()
	s.log.Close()
	if err != nil {
		s.err = err
		return
	}
	of := func(stream int) tokens.ErrStats {
		if stream < 0 {
			return tokens.AbsErrStats(nil)
		}
		return stats[stream]
	}
	for ri, name := range tokens.Names() {
		if s.calls[ri] < 0 && s.pre[ri] < 0 {
			continue
		}
		s.Measured[name] = &RulerErrors{Calls: of(s.calls[ri]), Complete: of(s.complete[ri]), PreTokens: of(s.pre[ri])}
	}
	breakdown := func(kind int) map[string]map[string]tokens.ErrStats {
		g := &s.groups[kind]
		if len(g.keys) == 0 {
			return nil
		}
		out := map[string]map[string]tokens.ErrStats{}
		for id, key := range g.keys {
			out[key] = map[string]tokens.ErrStats{}
			for ri, st := range g.streams[id] {
				if st >= 0 {
					out[key][tokens.Names()[ri]] = stats[st]
				}
			}
		}
		return out
	}
	s.ByTokenizer, s.ByFamily, s.ByContent = breakdown(byTokenizer), breakdown(byFamily), breakdown(byContent)
	join()
	s.Calibration, s.err = cal, calErr
}

// streamStats selects the median and p95 of every stream's |err| from the
// log.
func (s *Rulers) streamStats() ([]tokens.ErrStats, error) {
	return selectStats(s.counts, s.scan)
}

// selectStats is the median and p95 of each stream of |err| that scan
// gives, counts[st] being the length of stream st.
func selectStats(counts []int64, scan orderstat.Scan) ([]tokens.ErrStats, error) {
	q, err := orderstat.Quantiles(counts, []float64{0.5, 0.95}, scan)
	if err != nil {
		return nil, err
	}
	out := make([]tokens.ErrStats, len(counts))
	for st, n := range counts {
		out[st] = tokens.ErrStats{N: int(n), Median: q[st][0], P95: q[st][1]}
	}
	return out, nil
}

// crossValidate refits the calibrated ruler on the run's samples and
// measures it in sample and by cvFolds-fold cross-validation by transcript
// (a transcript's fold comes from its path, so the figure does not depend
// on -j); nil when there is nothing to fit. It reads the logged samples
// twice (tokens.FoldFit) and logs their errors for the selection of the
// medians and p95s, so only the fit's steps are in memory.
//
// With a memo (SetCalibrationMemo), figures stored under the samples' key
// are taken from it instead, and figures computed are stored there.
func (s *Rulers) crossValidate() (*CalibrationFigures, error) {
	if s.nSamples == 0 {
		return nil, nil
	}
	if s.memo == nil {
		return s.refit()
	}
	key, err := s.calibrationKey()
	if err != nil {
		return s.refit()
	}
	if data, ok := s.memo.Load(key); ok {
		if f, err := decodeCalMemo(key, data); err == nil {
			return f, nil
		}
	}
	f, err := s.refit()
	if err != nil {
		return nil, err
	}
	if data, err := encodeCalMemo(key, f); err == nil {
		s.memo.Store(key, data)
	}
	return f, nil
}

// refit is crossValidate without a memo.
func (s *Rulers) refit() (*CalibrationFigures, error) {
	s.refits++
	ff := tokens.NewFoldFit(tokens.FitOptions{}, s.models)
	ff.Grow(s.sampleCalls - s.nSamples)
	if err := s.scanSamples(func(_ int, smp *tokens.Sample, fold int) { ff.Add(smp, fold) }); err != nil {
		return nil, err
	}
	if err := ff.Fit(true); err != nil {
		return nil, nil
	}
	ce := &calErrors{streams: map[string]calPair{}}
	defer ce.errs.Close()
	err := s.scanSamples(func(i int, smp *tokens.Sample, _ int) {
		in, ho := ff.Errors(i, smp)
		for _, k := range []string{"all", smp.Gen} {
			p := ce.streamOf(k)
			ce.log(p.in, in)
			ce.log(p.cv, ho)
		}
	})
	if err != nil {
		return nil, err
	}
	stats, err := selectStats(ce.counts, ce.scan)
	if err != nil {
		return nil, err
	}
	out := &CalibrationFigures{Folds: cvFolds, Calls: s.sampleCalls, InSample: map[string]tokens.ErrStats{},
		CrossValidated: map[string]tokens.ErrStats{}, Notes: ff.Notes()}
	for _, k := range ce.keys {
		if p := ce.streams[k]; ce.counts[p.in] > 0 {
			out.InSample[k] = stats[p.in]
			out.CrossValidated[k] = stats[p.cv]
		}
	}
	return out, nil
}

// calPair is the pair of error streams of one key: in sample and
// cross-validated.
type calPair struct{ in, cv int }

// calErrors logs the calibration errors to a spill file as streams (in
// sample and cross-validated, of every call, "all", and per generation),
// counting each stream's errors; keys lists the streams' keys in first use
// order.
type calErrors struct {
	errs    tempfile.Log
	counts  []int64
	streams map[string]calPair
	keys    []string
}

// streamOf returns the streams of key k, making them on first use.
func (ce *calErrors) streamOf(k string) calPair {
	p, ok := ce.streams[k]
	if !ok {
		p = calPair{len(ce.counts), len(ce.counts) + 1}
		ce.counts = append(ce.counts, 0, 0)
		ce.streams[k] = p
		ce.keys = append(ce.keys, k)
	}
	return p
}

// log appends the absolute values of vs to stream st: 12 bytes each, the
// stream (uint32) and the value's float64 bits, little-endian.
func (ce *calErrors) log(st int, vs []float64) {
	for _, v := range vs {
		ce.errs.Buf = binary.LittleEndian.AppendUint32(ce.errs.Buf, uint32(st))
		ce.errs.Buf = binary.LittleEndian.AppendUint64(ce.errs.Buf, math.Float64bits(math.Abs(v)))
		ce.counts[st]++
		ce.errs.Flush(spillMem)
	}
}

// scan reads the logged errors back, giving fn each one's stream and
// order key.
func (ce *calErrors) scan(fn func(int, uint64)) error {
	err := ce.errs.Each(12, func(rec []byte) {
		fn(int(binary.LittleEndian.Uint32(rec)), orderstat.Key(math.Float64frombits(binary.LittleEndian.Uint64(rec[4:]))))
	})
	if err != nil {
		return fmt.Errorf("rulers: reading the spilled calibration errors: %w", err)
	}
	return nil
}

// encodeSample appends a calibration sample to the samples log: its fold,
// generation id and number of calls (uint32 each), then per call its
// quantities and real context (float64 bits), segment (int64) and a byte
// of flags (1: anchor, 2: complete), little-endian.
func (s *Rulers) encodeSample(smp *tokens.Sample) {
	h := fnv.New32a()
	h.Write([]byte(smp.Path))
	b := s.samples.Buf
	start := len(b)
	b = binary.LittleEndian.AppendUint32(b, h.Sum32()%cvFolds)
	b = binary.LittleEndian.AppendUint32(b, uint32(s.sampleGens.id(smp.Gen)))
	b = binary.LittleEndian.AppendUint32(b, uint32(len(smp.Calls)))
	for i := range smp.Calls {
		c := &smp.Calls[i]
		for _, x := range c.X {
			b = binary.LittleEndian.AppendUint64(b, math.Float64bits(x))
		}
		b = binary.LittleEndian.AppendUint64(b, math.Float64bits(c.Real))
		b = binary.LittleEndian.AppendUint64(b, uint64(int64(c.Segment)))
		var flags byte
		if c.Anchor {
			flags |= 1
		}
		if c.Complete {
			flags |= 2
		}
		b = append(b, flags)
	}
	if s.memoHash != nil {
		s.memoHash.Write(b[start:])
	}
	s.samples.Buf = b
	s.nSamples++
	s.samples.Flush(spillMem)
}

// scanSamples reads the samples log back, calling fn with each sample's
// index, the sample (reused from one call to the next) and its fold.
func (s *Rulers) scanSamples(fn func(i int, smp *tokens.Sample, fold int)) error {
	r := s.samples.Reader()
	var smp tokens.Sample
	var head [12]byte
	var call [len(tokens.SampleCall{}.X)*8 + 17]byte
	for i := 0; i < s.nSamples; i++ {
		if _, err := io.ReadFull(r, head[:]); err != nil {
			return fmt.Errorf("rulers: reading the spilled calibration samples: %w", err)
		}
		fold := int(binary.LittleEndian.Uint32(head[:]))
		smp.Gen = s.sampleGens.keys[binary.LittleEndian.Uint32(head[4:])-1]
		n := int(binary.LittleEndian.Uint32(head[8:]))
		smp.Calls = slices.Grow(smp.Calls[:0], n)[:n]
		for k := range smp.Calls {
			if _, err := io.ReadFull(r, call[:]); err != nil {
				return fmt.Errorf("rulers: reading the spilled calibration samples: %w", err)
			}
			c := &smp.Calls[k]
			o := 0
			for j := range c.X {
				c.X[j] = math.Float64frombits(binary.LittleEndian.Uint64(call[o:]))
				o += 8
			}
			c.Real = math.Float64frombits(binary.LittleEndian.Uint64(call[o:]))
			c.Segment = int(int64(binary.LittleEndian.Uint64(call[o+8:])))
			c.Anchor, c.Complete = call[o+16]&1 != 0, call[o+16]&2 != 0
		}
		fn(i, &smp, fold)
	}
	return nil
}

// ErrorHistogram bins a ruler's signed call errors (est − real) / real in
// 2 % bins over [−50 %, +50 %) for report.html; nil when there are none.
func (s *Rulers) ErrorHistogram(name string) *Histogram {
	if s == nil {
		return nil
	}
	ri := slices.Index(tokens.Names(), name)
	if ri < 0 || ri >= len(s.hists) || s.hists[ri] == nil {
		return nil
	}
	h := *s.hists[ri]
	h.Counts = slices.Clone(h.Counts)
	return &h
}
