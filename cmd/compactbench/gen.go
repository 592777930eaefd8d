package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/dustin/go-humanize"
	"github.com/urfave/cli/v2"

	"github.com/compactbench/compactbench/internal/gen"
	"github.com/compactbench/compactbench/internal/loader"
	"github.com/compactbench/compactbench/internal/plan"
)

func newGenCommand() *cli.Command {
	return &cli.Command{
		Name:      "gen",
		Usage:     "write labelled synthetic Claude Code sessions",
		ArgsUsage: "OUT_DIR",
		Description: "Writes sessions of the given scenarios (cycling through them) as Claude Code\n" +
			"JSONL files under OUT_DIR/<scenario>/, subagent files beside them, and the gold\n" +
			"anchors in OUT_DIR/labels.jsonl. --sessions N writes N sessions; --bytes SIZE\n" +
			"(100MiB, 2GiB, 500MB) writes sessions until the files reach SIZE. The same seed\n" +
			"and flags write the same bytes, whatever -j is.\n\n" +
			"Scenarios: " + strings.Join(gen.Scenarios, ", ") + ". The labelling policy and the usage\n" +
			"model are described in corpora/README.md.",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "scenarios", Value: strings.Join(gen.Scenarios, ","), Usage: "comma-separated scenarios to cycle through"},
			&cli.IntFlag{Name: "sessions", Aliases: []string{"n"}, Usage: "number of sessions to write"},
			&cli.StringFlag{Name: "bytes", Usage: "write sessions until their files reach `SIZE`"},
			&cli.Uint64Flag{Name: "seed", Value: 1, Usage: "corpus seed"},
			&cli.IntFlag{Name: "jobs", Aliases: []string{"j"}, Value: runtime.NumCPU(), Usage: "sessions generated in parallel"},
			&cli.BoolFlag{Name: "force", Usage: "write into OUT_DIR even if it is not empty"},
			&cli.BoolFlag{Name: "quiet", Aliases: []string{"q"}, Usage: "print nothing on success"},
		},
		Action: func(c *cli.Context) error {
			if c.NArg() != 1 {
				return usageErr("gen: want exactly one OUT_DIR, got %d arguments", c.NArg())
			}
			opts := genOptions{Out: c.Args().First(), Sessions: c.Int("sessions"), Seed: c.Uint64("seed"),
				Jobs: c.Int("jobs"), Force: c.Bool("force"), Quiet: c.Bool("quiet")}
			if err := plan.Jobs(opts.Jobs); err != nil {
				return err
			}
			if opts.Sessions < 0 {
				return usageErr("--sessions: want a positive number, got %d", opts.Sessions)
			}
			var err error
			if opts.Scenarios, err = parseScenarios(c.String("scenarios")); err != nil {
				return err
			}
			if s := c.String("bytes"); s != "" {
				n, err := humanize.ParseBytes(s)
				if err != nil || n == 0 {
					return usageErr("--bytes %q: want a size such as 100MiB or 2GiB", s)
				}
				opts.Bytes = int64(n)
			}
			return genCommand(c.Context, opts, c.App.ErrWriter)
		},
	}
}

// genOptions are the inputs of the gen command.
type genOptions struct {
	Out       string
	Scenarios []string
	Sessions  int
	Bytes     int64
	Seed      uint64
	Jobs      int
	Force     bool
	Quiet     bool
}

func parseScenarios(s string) ([]string, error) {
	known := map[string]bool{}
	for _, k := range gen.Scenarios {
		known[k] = true
	}
	var out []string
	for _, name := range strings.Split(s, ",") {
		name = strings.TrimSpace(name)
		if name == "" {
			continue
		}
		if !known[name] {
			return nil, usageErr("--scenarios: unknown scenario %q (known: %s)", name, strings.Join(gen.Scenarios, ", "))
		}
		out = append(out, name)
	}
	if len(out) == 0 {
		return nil, usageErr("--scenarios: no scenario given")
	}
	return out, nil
}

// generated is one session: its manifest, and its files, written to
// temporary files until it is emitted.
type generated struct {
	m     *gen.Manifest
	files map[string]*genFile
}

// genFile is one file of a session being generated: a temporary file in
// the output's staging directory, moved to its name when the session is
// emitted in order. A worker writes it directly (the generator hands it
// 256 KiB at a time), so a session in flight holds no copy of its files:
// gen's memory does not depend on the sessions' sizes or on how far the
// writing lags.
type genFile struct {
	f     *os.File
	final string
}

// Write writes to the temporary file.
func (g *genFile) Write(p []byte) (int, error) {
	n, err := g.f.Write(p)
	if err != nil {
		err = fmt.Errorf("write %s: %w", g.final, err)
	}
	return n, err
}

// Close completes the temporary file (gen.Generate closes a file when it is
// complete).
func (g *genFile) Close() error {
	if err := g.f.Chmod(0o644); err != nil {
		g.f.Close()
		return fmt.Errorf("write %s: %w", g.final, err)
	}
	if err := g.f.Close(); err != nil {
		return fmt.Errorf("write %s: %w", g.final, err)
	}
	return nil
}

// genTemps are the temporary files not yet moved to their names: those of
// the sessions in flight, and, once generation stops, of the sessions past
// --bytes or after an error. They live in one hidden staging directory of
// the output, so the workers create no directory of the corpus: only the
// in-order emit does, for the sessions kept, and the tree is the same
// whatever -j. removeAll deletes the staging directory.
type genTemps struct {
	dir   string
	mu    sync.Mutex
	files map[*genFile]bool
}

// newGenTemps makes the staging directory in out.
func newGenTemps(out string) (*genTemps, error) {
	dir, err := os.MkdirTemp(out, ".gen-*.tmp")
	if err != nil {
		return nil, fmt.Errorf("output directory: %w", err)
	}
	return &genTemps{dir: dir, files: map[*genFile]bool{}}, nil
}

// create starts the temporary file of path (relative to out).
func (t *genTemps) create(out, path string) (*genFile, error) {
	final := filepath.Join(out, filepath.FromSlash(path))
	f, err := os.CreateTemp(t.dir, "*.tmp")
	if err != nil {
		return nil, fmt.Errorf("write %s: %w", final, err)
	}
	g := &genFile{f: f, final: final}
	t.mu.Lock()
	t.files[g] = true
	t.mu.Unlock()
	return g, nil
}

// commit moves a complete file to its name, making its directory.
func (t *genTemps) commit(g *genFile) error {
	if err := os.MkdirAll(filepath.Dir(g.final), 0o755); err != nil {
		return fmt.Errorf("write %s: %w", g.final, err)
	}
	if err := os.Rename(g.f.Name(), g.final); err != nil {
		return fmt.Errorf("write %s: %w", g.final, err)
	}
	t.mu.Lock()
	delete(t.files, g)
	t.mu.Unlock()
	return nil
}

// removeAll removes the files never moved and the staging directory (the
// workers are done).
func (t *genTemps) removeAll() {
	for g := range t.files {
		g.f.Close() // a file a failed session left open; else already closed
	}
	clear(t.files)
	os.RemoveAll(t.dir)
}

// errEnough stops generation once --bytes is reached.
var errEnough = errors.New("enough bytes")

// genCommand writes the corpus. Sessions are made in parallel, each
// written by its worker to temporary files, and emitted by one goroutine
// in index order (files renamed, labels appended), so the output never
// depends on -j; with --bytes the first sessions whose total reaches the
// size are kept and the files of the others removed.
func genCommand(ctx context.Context, opts genOptions, stderr io.Writer) error {
	if (opts.Sessions > 0) == (opts.Bytes > 0) {
		return usageErr("gen: give one of --sessions N or --bytes SIZE")
	}
	if opts.Sessions < 0 {
		return usageErr("--sessions must be positive")
	}
	if err := prepareOut(opts.Out, opts.Force); err != nil {
		return err
	}
	start := time.Now()
	n := opts.Sessions
	if opts.Bytes > 0 {
		n = int(^uint(0) >> 1) // until emit says enough
	}
	temps, err := newGenTemps(opts.Out)
	if err != nil {
		return err
	}
	defer temps.removeAll()
	work := genWork(opts, temps)
	labels, err := newLabelWriter(opts.Out)
	if err != nil {
		return err
	}
	defer labels.abort()
	var sum genSummary
	emit := func(i int, g generated) error {
		for _, f := range g.m.Files {
			if err := temps.commit(g.files[f.Path]); err != nil {
				return err
			}
		}
		if err := labels.add(g.m.Labels); err != nil {
			return err
		}
		sum.add(g.m)
		if opts.Bytes > 0 && sum.Bytes >= opts.Bytes {
			return errEnough
		}
		return nil
	}
	if err := loader.Ordered(ctx, n, opts.Jobs, work, emit); err != nil && !errors.Is(err, errEnough) {
		return err
	}
	if err := labels.commit(); err != nil {
		return err
	}
	if !opts.Quiet {
		sum.print(stderr, opts.Out, time.Since(start))
	}
	return nil
}

// genWork generates session i into temporary files.
func genWork(opts genOptions, temps *genTemps) func(ctx context.Context, i int) (generated, error) {
	return func(ctx context.Context, i int) (generated, error) {
		g := generated{files: map[string]*genFile{}}
		var err error
		g.m, err = gen.Generate(gen.SpecAt(opts.Seed, opts.Scenarios, i), func(path string) (io.Writer, error) {
			f, err := temps.create(opts.Out, path)
			if err != nil {
				return nil, err
			}
			g.files[path] = f
			return f, nil
		})
		return g, err
	}
}

// labelWriter writes the generated sessions' gold labels to labels.jsonl,
// one JSON line each, in session order, as the sessions are emitted: a
// temporary file renamed when generation is complete.
type labelWriter struct {
	f     *os.File
	final string
	w     *bufio.Writer
	enc   *json.Encoder
}

func newLabelWriter(out string) (*labelWriter, error) {
	final := filepath.Join(out, "labels.jsonl")
	f, err := os.CreateTemp(out, ".labels.jsonl.*.tmp")
	if err != nil {
		return nil, fmt.Errorf("write %s: %w", final, err)
	}
	l := &labelWriter{f: f, final: final, w: bufio.NewWriterSize(f, 64<<10)}
	l.enc = json.NewEncoder(l.w)
	l.enc.SetEscapeHTML(false)
	return l, nil
}

// add writes one session's labels.
func (l *labelWriter) add(labels []gen.Label) error {
	for _, lb := range labels {
		if err := l.enc.Encode(lb); err != nil {
			return fmt.Errorf("write %s: %w", l.final, err)
		}
	}
	return nil
}

// commit completes labels.jsonl.
func (l *labelWriter) commit() error {
	err := l.w.Flush()
	if err == nil {
		err = l.f.Chmod(0o644)
	}
	if err == nil {
		err = l.f.Close()
	}
	if err == nil {
		err = os.Rename(l.f.Name(), l.final)
	}
	if err != nil {
		return fmt.Errorf("write %s: %w", l.final, err)
	}
	l.f = nil
	return nil
}

// abort removes the temporary file unless commit renamed it.
func (l *labelWriter) abort() {
	if l.f != nil {
		l.f.Close()
		os.Remove(l.f.Name())
	}
}

// prepareOut creates the output directory; a non-empty one needs --force.
func prepareOut(dir string, force bool) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("output directory: %w", err)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return fmt.Errorf("output directory: %w", err)
	}
	if len(entries) > 0 && !force {
		return usageErr("gen: %s is not empty (use --force to write into it anyway)", dir)
	}
	return nil
}

// genSummary counts what a gen run wrote.
type genSummary struct {
	Sessions, Files, Bytes                   int64
	Turns, Calls, ToolCalls, CompactSessions int64
	ByScenario                               map[string]int64
	Labels                                   map[string]int64
}

func (s *genSummary) add(m *gen.Manifest) {
	if s.ByScenario == nil {
		s.ByScenario, s.Labels = map[string]int64{}, map[string]int64{}
	}
	s.Sessions++
	s.ByScenario[m.Scenario]++
	for _, f := range m.Files {
		s.Files++
		s.Bytes += f.Bytes
		s.Calls += f.APICalls
		s.ToolCalls += f.ToolCalls
		if f.Kind == "session" {
			s.Turns += f.Turns
			if f.CompactBoundaries > 0 {
				s.CompactSessions++
			}
		}
	}
	for _, l := range m.Labels {
		s.Labels[l.Type]++
	}
}

func (s *genSummary) print(w io.Writer, out string, took time.Duration) {
	mb := float64(s.Bytes) / 1e6
	fmt.Fprintf(w, "wrote %d sessions, %d files, %s in %v (%.0f MB/s) to %s\n", s.Sessions, s.Files,
		humanize.IBytes(uint64(s.Bytes)), took.Round(time.Millisecond), mb/took.Seconds(), out)
	fmt.Fprintf(w, "  %d turns, %d API calls, %d tool calls, %d sessions with a compaction\n", s.Turns, s.Calls, s.ToolCalls, s.CompactSessions)
	fmt.Fprintf(w, "  sessions: %s\n  labels:   %s\n", counts(s.ByScenario), counts(s.Labels))
}

// counts renders a count map as "a=1 b=2", keys sorted.
func counts(m map[string]int64) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s=%d", k, m[k])
	}
	return strings.Join(parts, " ")
}
