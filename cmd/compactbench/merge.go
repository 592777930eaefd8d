package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"

	"github.com/klauspost/compress/zstd"
	"github.com/urfave/cli/v2"

	"github.com/compactbench/compactbench/internal/analysis"
	"github.com/compactbench/compactbench/internal/anchors"
	"github.com/compactbench/compactbench/internal/report"
)

// shardFile is where run --shard keeps its per-file results for merge.
const shardFile = "shard.jsonl.zst"

// shardFormat changes whenever the shard file's layout does.
const shardFormat = "compactbench-shard/2"

// shardHeader is the first line of a shard file: what merge needs to write
// the outputs one unsharded run would have written.
type shardHeader struct {
	Format string `json:"format"`
	K      int    `json:"k"`
	N      int    `json:"n"`
	// Files is the number of input files of the whole (unsharded) run.
	Files            int              `json:"files"`
	Build            string           `json:"build"`
	Meta             report.Meta      `json:"meta"`
	Settings         []report.Setting `json:"settings"`
	ReportTranscript string           `json:"report_transcript,omitempty"`
	RuleSets         []shardRuleSet   `json:"rule_sets,omitempty"`
	// LabelProblems are the problem rows of unusable label lines: rows of
	// the run, not of a file, which every shard's header carries and merge
	// writes once, first, as the unsharded run does.
	LabelProblems []analysis.ProblemRow `json:"label_problems,omitempty"`
}

// shardRuleSet is a rule set as its source, parsed again by merge.
type shardRuleSet struct {
	Name   string `json:"name"`
	Origin string `json:"origin"`
	Source []byte `json:"source"`
}

// shardEntry is one input file's results: a line of a shard file after the
// header, in input order.
type shardEntry struct {
	Index   int                `json:"index"`
	Path    string             `json:"path"`
	Results []*analysis.Result `json:"results"`
}

// shardWriter streams a shard's results into OUT/shard.jsonl.zst (under a
// temporary name until finish).
type shardWriter struct {
	f   *os.File
	zw  *zstd.Encoder
	enc *json.Encoder
	dst string
}

func newShardWriter(dir string, h *shardHeader) (*shardWriter, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	f, err := os.CreateTemp(dir, ".shard-*")
	if err != nil {
		return nil, fmt.Errorf("--shard: %w", err)
	}
	zw, err := zstd.NewWriter(f, zstd.WithEncoderLevel(zstd.SpeedFastest))
	if err != nil {
		f.Close()
		os.Remove(f.Name())
		return nil, err
	}
	sw := &shardWriter{f: f, zw: zw, enc: json.NewEncoder(zw), dst: filepath.Join(dir, shardFile)}
	if err := sw.enc.Encode(h); err != nil {
		sw.abort()
		return nil, fmt.Errorf("--shard: %w", err)
	}
	return sw, nil
}

func (sw *shardWriter) add(index int, path string, rs []*analysis.Result) error {
	if err := sw.enc.Encode(shardEntry{Index: index, Path: path, Results: withoutRuleSets(rs)}); err != nil {
		return fmt.Errorf("--shard: %s: %w", path, err)
	}
	return nil
}

func (sw *shardWriter) finish() error {
	err := sw.zw.Close()
	if cerr := sw.f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(sw.f.Name(), sw.dst)
	}
	if err != nil {
		os.Remove(sw.f.Name())
		return fmt.Errorf("--shard: writing %s: %w", sw.dst, err)
	}
	return nil
}

func (sw *shardWriter) abort() {
	sw.zw.Close()
	sw.f.Close()
	os.Remove(sw.f.Name())
}

// withoutRuleSets copies results with their rule set pointers cleared: the
// sets are configuration, written once and linked again by name.
func withoutRuleSets(rs []*analysis.Result) []*analysis.Result {
	out := make([]*analysis.Result, len(rs))
	for i, r := range rs {
		cp := *r
		cp.AnchorCounts = slices.Clone(r.AnchorCounts)
		for j := range cp.AnchorCounts {
			cp.AnchorCounts[j].RuleSet = nil
		}
		out[i] = &cp
	}
	return out
}

// linkRuleSets points results' anchor counts at the configuration's sets.
func linkRuleSets(rs []*analysis.Result, sets map[string]*anchors.RuleSet) error {
	for _, r := range rs {
		if r == nil {
			return fmt.Errorf("a null result")
		}
		for i := range r.AnchorCounts {
			set := sets[r.AnchorCounts[i].Set]
			if set == nil {
				return fmt.Errorf("rule set %q is not in the configuration", r.AnchorCounts[i].Set)
			}
			r.AnchorCounts[i].RuleSet = set
		}
	}
	return nil
}

func shardRuleSets(cfg *analysis.Config) []shardRuleSet {
	if cfg.Anchors == nil {
		return nil
	}
	var out []shardRuleSet
	for _, s := range cfg.Anchors.Sets {
		out = append(out, shardRuleSet{Name: s.Name, Origin: s.Origin, Source: s.Source})
	}
	return out
}

func newMergeCommand() *cli.Command {
	return &cli.Command{
		Name:      "merge",
		Usage:     "combine the outputs of run --shard K/N into those of one unsharded run",
		ArgsUsage: "DIR...",
		Description: "Reads the shard results (" + shardFile + ") that run --shard writes into each output\n" +
			"directory and writes the tables, summary.json and reports one run over all the\n" +
			"inputs would have written, byte for byte. Every shard 1..N of one run (same\n" +
			"inputs, configuration and build) must be given.",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "out", Aliases: []string{"o"}, Value: "results/latest", Usage: "output directory"},
			&cli.StringFlag{Name: "format", Value: defaultFormats, Usage: "outputs, comma-separated: " + formatsHelp},
			&cli.BoolFlag{Name: "quiet", Aliases: []string{"q"}, Usage: "print nothing on success"},
		},
		Action: func(c *cli.Context) error {
			formats, err := parseFormats(c.String("format"))
			if err != nil {
				return err
			}
			return mergeCommand(c.Args().Slice(), c.String("out"), formats, c.Bool("quiet"), c.App.Writer, c.App.ErrWriter)
		},
	}
}

// shardReader reads one shard file's entries in order.
type shardReader struct {
	path string
	f    *os.File
	zr   *zstd.Decoder
	br   *bufio.Reader
	head shardHeader
	next *shardEntry // nil at the end
	last int
}

func openShard(dir string) (*shardReader, error) {
	path := filepath.Join(dir, shardFile)
	f, err := os.Open(path)
	if err != nil {
		return nil, usageErr("merge: %v (is %s the output of run --shard?)", err, dir)
	}
	zr, err := zstd.NewReader(f)
	if err != nil {
		f.Close()
		return nil, usageErr("merge: %s: %v", path, err)
	}
	r := &shardReader{path: path, f: f, zr: zr, br: bufio.NewReaderSize(zr, 1<<20), last: -1}
	line, err := r.br.ReadBytes('\n')
	if err != nil {
		r.close()
		return nil, usageErr("merge: %s: no header: %v", path, err)
	}
	if err := json.Unmarshal(line, &r.head); err != nil || r.head.Format != shardFormat {
		r.close()
		return nil, usageErr("merge: %s: not a %s file", path, shardFormat)
	}
	return r, nil
}

// advance reads the next entry (next is nil at the end of the file).
func (r *shardReader) advance(sets map[string]*anchors.RuleSet) error {
	line, err := r.br.ReadBytes('\n')
	if err == io.EOF && len(line) == 0 {
		r.next = nil
		return nil
	}
	if err != nil && err != io.EOF {
		return fmt.Errorf("merge: %s: %w", r.path, err)
	}
	var e shardEntry
	if err := json.Unmarshal(line, &e); err != nil {
		return fmt.Errorf("merge: %s: entry after index %d: %w", r.path, r.last, err)
	}
	if e.Index <= r.last || e.Index >= r.head.Files {
		return fmt.Errorf("merge: %s: entry %d (%s) out of order or out of range", r.path, e.Index, e.Path)
	}
	if err := linkRuleSets(e.Results, sets); err != nil {
		return fmt.Errorf("merge: %s: %s: %w", r.path, e.Path, err)
	}
	r.last, r.next = e.Index, &e
	return nil
}

func (r *shardReader) close() {
	r.zr.Close()
	r.f.Close()
}

// mergeCommand is the whole merge command: open and check the shards,
// write their entries in input order, print the summary.
func mergeCommand(dirs []string, out string, formats outputFormats, quiet bool, stdout, stderr io.Writer) error {
	if len(dirs) == 0 {
		return usageErr("merge: no shard directories (try: compactbench merge out/shard-*/ -o results/latest)")
	}
	warnTempDir(stderr)
	shards, err := openShards(dirs)
	defer func() {
		for _, s := range shards {
			s.close()
		}
	}()
	if err != nil {
		return err
	}
	if err := sameRun(dirs, shards); err != nil {
		return err
	}
	first := &shards[0].head
	sets, err := shardSets(first)
	if err != nil {
		return err
	}
	w, err := report.NewWriter(report.Options{Dir: out, Formats: formats.Files, Meta: first.Meta,
		Settings: first.Settings, ReportTranscript: first.ReportTranscript})
	if err != nil {
		return err
	}
	files, err := mergeEntries(w, shards, sets)
	if err != nil {
		w.Abort()
		return err
	}
	sum, err := w.Close()
	if err != nil || quiet {
		return err
	}
	if formats.Table {
		if err := terminalTables(stdout, sum, false); err != nil {
			return err
		}
	}
	fmt.Fprintf(stderr, "merged %d shards (%d files): %d transcripts, %d problems; outputs in %s\n",
		len(shards), files, sum.Corpus.Transcripts, sum.Corpus.Problems, out)
	return nil
}

// openShards opens the shard file of every directory; on an error it
// returns the shards opened so far, for the caller to close.
func openShards(dirs []string) ([]*shardReader, error) {
	var shards []*shardReader
	for _, d := range dirs {
		s, err := openShard(d)
		if err != nil {
			return shards, err
		}
		shards = append(shards, s)
	}
	return shards, nil
}

// sameRun requires every shard of one run, each once.
func sameRun(dirs []string, shards []*shardReader) error {
	first := &shards[0].head
	seen := map[int]string{}
	for i, s := range shards {
		h := &s.head
		if h.N != first.N || h.Files != first.Files || h.Build != first.Build || h.ReportTranscript != first.ReportTranscript ||
			!reflect.DeepEqual(h.Meta, first.Meta) || !reflect.DeepEqual(h.Settings, first.Settings) || !reflect.DeepEqual(h.RuleSets, first.RuleSets) ||
			!reflect.DeepEqual(h.LabelProblems, first.LabelProblems) {
			return usageErr("merge: %s and %s are shards of different runs (inputs, configuration or build differ)", dirs[0], dirs[i])
		}
		if prev, dup := seen[h.K]; dup {
			return usageErr("merge: %s and %s are both shard %d/%d", prev, dirs[i], h.K, h.N)
		}
		seen[h.K] = dirs[i]
	}
	var missing []string
	for k := 1; k <= first.N; k++ {
		if _, ok := seen[k]; !ok {
			missing = append(missing, fmt.Sprintf("%d/%d", k, first.N))
		}
	}
	if len(missing) > 0 {
		return usageErr("merge: shards missing: %s", strings.Join(missing, ", "))
	}
	return nil
}

// shardSets parses the rule sets a shard header carries, by name.
func shardSets(h *shardHeader) (map[string]*anchors.RuleSet, error) {
	sets := map[string]*anchors.RuleSet{}
	for _, rs := range h.RuleSets {
		set, err := anchors.Parse(rs.Source, rs.Origin)
		if err != nil {
			return nil, fmt.Errorf("merge: rule set %s: %w", rs.Name, err)
		}
		sets[rs.Name] = set
	}
	return sets, nil
}

// mergeEntries writes the run's label problems, then every shard's entries
// in input order (the smallest next index of any shard), and checks that
// the shards held every file of the run; it returns the number of files.
func mergeEntries(w *report.Writer, shards []*shardReader, sets map[string]*anchors.RuleSet) (int, error) {
	first := &shards[0].head
	if len(first.LabelProblems) > 0 {
		if err := w.AddProblems(first.LabelProblems); err != nil {
			return 0, err
		}
	}
	for _, s := range shards {
		if err := s.advance(sets); err != nil {
			return 0, err
		}
	}
	files := 0
	for {
		var low *shardReader
		for _, s := range shards {
			if s.next != nil && (low == nil || s.next.Index < low.next.Index) {
				low = s
			}
		}
		if low == nil {
			break
		}
		if err := w.AddFile(low.next.Results); err != nil {
			return files, err
		}
		files++
		if err := low.advance(sets); err != nil {
			return files, err
		}
	}
	if files != first.Files {
		return files, fmt.Errorf("merge: the shards hold %d of the run's %d files", files, first.Files)
	}
	return files, nil
}
