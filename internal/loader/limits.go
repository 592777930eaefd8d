package loader

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"sort"

	"github.com/compactbench/compactbench/internal/transcript"
)

// Limits bound what reading one input file may cost, whatever its content:
// a line or JSON value longer than MaxLine, or nested deeper than MaxDepth,
// is skipped as a bad record (a problem row says which limit it hit); a
// compressed file stops after MaxDecompressed bytes (a problem row, the
// records before it are kept); a transcript lists at most MaxProblems
// problems, then one row with the total. A zero field takes its default.
type Limits struct {
	// MaxLine is the longest line (JSON lines), JSON value (an element of a
	// document's top-level array) or whole document (SWE-agent .traj) held
	// in memory, in bytes.
	MaxLine int
	// MaxDepth is the deepest nesting of arrays and objects accepted in a
	// record; it may not exceed MaxDepthCeiling.
	MaxDepth int
	// MaxProblems is how many problems a transcript lists with their lines;
	// the rest are counted in one summary row.
	MaxProblems int
	// MaxDecompressed is how many bytes a gzip, zstd or zip file may
	// decompress to.
	MaxDecompressed int64
}

// Default limits. Real Claude Code lines (a pasted image, a large tool
// result) stay under a few MB, but a 100 MB line is legitimate and read; a
// record costs a few times its size to parse and analyse.
const (
	DefaultMaxLine         = 256 << 20
	DefaultMaxDepth        = 256
	DefaultMaxProblems     = 1000
	DefaultMaxDecompressed = 16 << 30
	// MaxDepthCeiling is the JSON parser's own nesting limit.
	MaxDepthCeiling = 300
	// maxProblemsHeld caps the problems a reader keeps in memory, whatever
	// MaxProblems says (a file of millions of bad lines).
	maxProblemsHeld = 10000
)

// DefaultLimits are the limits a zero Limits stands for.
func DefaultLimits() Limits {
	return Limits{MaxLine: DefaultMaxLine, MaxDepth: DefaultMaxDepth, MaxProblems: DefaultMaxProblems, MaxDecompressed: DefaultMaxDecompressed}
}

// Validate reports a limit out of range, naming its flag.
func (l Limits) Validate() error {
	switch {
	case l.MaxLine < 0:
		return fmt.Errorf("--max-line: want a positive size, got %d", l.MaxLine)
	case l.MaxDepth < 0 || l.MaxDepth > MaxDepthCeiling:
		return fmt.Errorf("--max-depth: want 1 to %d, got %d", MaxDepthCeiling, l.MaxDepth)
	case l.MaxProblems < 0 || l.MaxProblems > maxProblemsHeld:
		return fmt.Errorf("--max-problems: want 1 to %d, got %d", maxProblemsHeld, l.MaxProblems)
	case l.MaxDecompressed < 0:
		return fmt.Errorf("--max-decompressed: want a positive size, got %d", l.MaxDecompressed)
	}
	return nil
}

// withDefaults fills the zero fields.
func (l Limits) withDefaults() Limits {
	d := DefaultLimits()
	if l.MaxLine <= 0 {
		l.MaxLine = d.MaxLine
	}
	if l.MaxDepth <= 0 {
		l.MaxDepth = d.MaxDepth
	}
	l.MaxDepth = min(l.MaxDepth, MaxDepthCeiling)
	if l.MaxProblems <= 0 {
		l.MaxProblems = d.MaxProblems
	}
	l.MaxProblems = min(l.MaxProblems, maxProblemsHeld)
	if l.MaxDecompressed <= 0 {
		l.MaxDecompressed = d.MaxDecompressed
	}
	return l
}

// errDecompressed is returned by a compressed source past MaxDecompressed.
var errDecompressed = errors.New("decompressed size limit reached")

// capReader returns errDecompressed once more than n bytes were read.
type capReader struct {
	r    io.Reader
	left int64
	max  int64
}

func (c *capReader) Read(p []byte) (int, error) {
	if c.left <= 0 {
		return 0, fmt.Errorf("%w: the file decompresses to more than %s (--max-decompressed); the rest is not read", errDecompressed, sizeText(c.max))
	}
	if int64(len(p)) > c.left {
		p = p[:c.left]
	}
	n, err := c.r.Read(p)
	c.left -= int64(n)
	return n, err
}

// sizeText renders a byte count in binary units.
func sizeText(n int64) string {
	switch {
	case n >= 1<<30 && n%(1<<30) == 0:
		return fmt.Sprintf("%d GiB", n>>30)
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d bytes", n)
}

// tooLong is the reason given for a record over MaxLine.
func tooLong(what string, max int) string {
	return fmt.Sprintf("%s longer than %s (--max-line); skipped", what, sizeText(int64(max)))
}

// tooDeep is the reason given for a record nested deeper than MaxDepth.
func tooDeep(what string, max int) string {
	return fmt.Sprintf("%s nested deeper than %d levels (--max-depth); skipped", what, max)
}

// jsonDepth returns the deepest nesting of arrays and objects in data,
// outside strings, stopping as soon as it exceeds limit. A cheap count of
// brackets first spares the scan for the lines that cannot exceed it.
func jsonDepth(data []byte, limit int) int {
	if bytes.Count(data, []byte{'['})+bytes.Count(data, []byte{'{'}) <= limit {
		return 0
	}
	depth, deepest := 0, 0
	for i := 0; i < len(data); i++ {
		switch data[i] {
		case '"':
			end, err := skipString(data, i)
			if err != nil {
				return deepest
			}
			i = end - 1
		case '[', '{':
			depth++
			if depth > deepest {
				deepest = depth
				if deepest > limit {
					return deepest
				}
			}
		case ']', '}':
			depth--
		}
	}
	return deepest
}

// lostLine is a line eachLine skipped because of a limit.
type lostLine struct {
	line   int
	reason string
}

// settle folds what the source skipped into a transcript before it is
// emitted, and caps the problems it lists: the skipped lines become bad
// records (counted in Stats.Lines unless the reader counted every line
// handed out already), and problems beyond MaxProblems are replaced by one
// summary row, the total kept in Stats.ProblemsUnlisted.
func (s *Source) settle(t *transcript.Transcript) {
	if len(s.lost) > 0 {
		st := &t.Stats
		deficit := st.Lines - st.ParsedLines - st.IgnoredLines - st.BadLines
		for _, l := range s.lost {
			if deficit > 0 {
				deficit--
			} else {
				st.Lines++
			}
			st.BadLines++
			t.Problems = append(t.Problems, transcript.Problem{Line: l.line, Reason: l.reason})
		}
		s.lost = nil
		sort.SliceStable(t.Problems, func(i, j int) bool { return t.Problems[i].Line < t.Problems[j].Line })
	}
	max := s.limits().MaxProblems
	total := len(t.Problems) + t.Stats.ProblemsUnlisted
	if total <= max {
		return
	}
	keep := min(len(t.Problems), max)
	t.Problems = append(t.Problems[:keep:keep], transcript.Problem{
		Line:   0,
		Reason: fmt.Sprintf("%d problems in all; only the first %d are listed (--max-problems)", total, max),
	})
	// The summary row stands for one of the unlisted problems.
	t.Stats.ProblemsUnlisted = total - len(t.Problems)
}

// cancelled returns the source's context error, if any.
func (s *Source) cancelled() error {
	if s.ctx == nil {
		return nil
	}
	return s.ctx.Err()
}

// limits returns the source's limits with defaults filled.
func (s *Source) limits() Limits {
	if !s.limitsSet {
		s.lim = s.lim.withDefaults()
		s.limitsSet = true
	}
	return s.lim
}

// srcReader is the reader readers get as Source.R: it carries the source,
// so that scanValues, which is handed only a reader, applies its limits.
type srcReader interface {
	io.Reader
	source() *Source
}

type limitedReader struct {
	io.Reader
	src *Source
}

func (l limitedReader) source() *Source { return l.src }

// sourceOf returns the source r reads, or nil.
func sourceOf(r io.Reader) *Source {
	if sr, ok := r.(srcReader); ok {
		return sr.source()
	}
	return nil
}

// limitsOf returns the limits of the source r reads, or the defaults.
func limitsOf(r io.Reader) Limits {
	if src := sourceOf(r); src != nil {
		return src.limits()
	}
	return DefaultLimits()
}
