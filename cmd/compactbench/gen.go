package main

import (
	"bytes"
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
	"github.com/compactbench/compactbench/internal/report"
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

// generated is one session, held in memory until it is written in order.
type generated struct {
	m     *gen.Manifest
	files map[string]*bytes.Buffer
}

// fileBufs recycles the in-memory files between sessions; growing fresh
// buffers for every session cost as much system time as writing the files.
var fileBufs = sync.Pool{New: func() any { return new(bytes.Buffer) }}

// errEnough stops generation once --bytes is reached.
var errEnough = errors.New("enough bytes")

// genCommand writes the corpus. Sessions are made in parallel and written
// by one goroutine in index order, so the output never depends on -j; with
// --bytes the first sessions whose total reaches the size are kept.
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
	work := func(ctx context.Context, i int) (generated, error) {
		g := generated{files: map[string]*bytes.Buffer{}}
		var err error
		g.m, err = gen.Generate(gen.SpecAt(opts.Seed, opts.Scenarios, i), func(path string) (io.Writer, error) {
			b := fileBufs.Get().(*bytes.Buffer)
			b.Reset()
			g.files[path] = b
			return b, nil
		})
		return g, err
	}
	var (
		labels []gen.Label
		sum    genSummary
	)
	emit := func(i int, g generated) error {
		for _, f := range g.m.Files {
			b := g.files[f.Path]
			if err := writeFileAtomic(filepath.Join(opts.Out, filepath.FromSlash(f.Path)), b.Bytes()); err != nil {
				return err
			}
			fileBufs.Put(b)
		}
		labels = append(labels, g.m.Labels...)
		sum.add(g.m)
		if opts.Bytes > 0 && sum.Bytes >= opts.Bytes {
			return errEnough
		}
		return nil
	}
	if err := loader.Ordered(ctx, n, opts.Jobs, work, emit); err != nil && !errors.Is(err, errEnough) {
		return err
	}
	if err := writeLabels(filepath.Join(opts.Out, "labels.jsonl"), labels); err != nil {
		return err
	}
	if !opts.Quiet {
		sum.print(stderr, opts.Out, time.Since(start))
	}
	return nil
}

// writeLabels writes the generated sessions' gold labels, one JSON line
// each, in session order.
func writeLabels(path string, labels []gen.Label) error {
	var lb bytes.Buffer
	enc := json.NewEncoder(&lb)
	enc.SetEscapeHTML(false)
	for _, l := range labels {
		if err := enc.Encode(l); err != nil {
			return err
		}
	}
	return writeFileAtomic(path, lb.Bytes())
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

// writeFileAtomic writes data to path through a temporary file
// (report.WriteFileAtomic), creating the directory, so an interrupted run
// never leaves a half file under the name.
func writeFileAtomic(path string, data []byte) error {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return report.WriteFileAtomic(dir, filepath.Base(path), data)
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
