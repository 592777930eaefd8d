package plan

import (
	"os"
	"strings"

	"github.com/dustin/go-humanize"

	"github.com/compactbench/compactbench/internal/analysis"
	"github.com/compactbench/compactbench/internal/compaction"
	"github.com/compactbench/compactbench/internal/loader"
	"github.com/compactbench/compactbench/internal/report"
	"github.com/compactbench/compactbench/internal/tokens"
)

// DefaultFormats is --format's default: every output.
const DefaultFormats = "table,csv,parquet,json,md,html"

// FormatsHelp describes --format's names.
const FormatsHelp = "table (terminal summary), csv and parquet (every table), json (summary.json), " +
	"md (report.md), html (report.html), or all"

// ParseFormats reads --format.
func ParseFormats(s string) (Formats, error) {
	var f Formats
	for _, name := range strings.Split(s, ",") {
		switch strings.TrimSpace(name) {
		case "table":
			f.Table = true
		case "csv":
			f.Files.CSV = true
		case "parquet":
			f.Files.Parquet = true
		case "json":
			f.Files.JSON = true
		case "md", "markdown":
			f.Files.Markdown = true
		case "html":
			f.Files.HTML = true
		case "all":
			f.Table = true
			f.Files = report.Formats{CSV: true, Parquet: true, JSON: true, Markdown: true, HTML: true}
		case "":
		default:
			return f, bad("format", "--format: unknown format %q (known: table, csv, parquet, json, md, html, all)", name)
		}
	}
	return f, nil
}

// Limits validates the limit flags.
func Limits(in LimitsInput) (loader.Limits, error) {
	size := func(name, v string) (int64, error) {
		n, err := humanize.ParseBytes(v)
		if err != nil || n == 0 || n > 1<<50 {
			return 0, bad(name, "--%s %q: want a size such as 64MiB or 2GiB", name, v)
		}
		return int64(n), nil
	}
	var l loader.Limits
	line, err := size("max-line", in.MaxLine)
	if err != nil {
		return l, err
	}
	if line > 1<<31-1 {
		return l, bad("max-line", "--max-line %q: want at most 2GiB", in.MaxLine)
	}
	if l.MaxDecompressed, err = size("max-decompressed", in.MaxDecompressed); err != nil {
		return l, err
	}
	l.MaxLine, l.MaxDepth, l.MaxProblems = int(line), in.MaxDepth, in.MaxProblems
	if l.MaxDepth < 1 {
		return l, bad("max-depth", "--max-depth: want 1 to %d, got %d", loader.MaxDepthCeiling, l.MaxDepth)
	}
	if l.MaxProblems < 1 {
		return l, bad("max-problems", "--max-problems: want at least 1, got %d", l.MaxProblems)
	}
	if err := l.Validate(); err != nil {
		return l, bad("max-depth", "%v", err)
	}
	return l, nil
}

// Jobs validates -j.
func Jobs(jobs int) error {
	if jobs < 1 {
		return bad("jobs", "--jobs: want at least 1, got %d", jobs)
	}
	return nil
}

// InputFormat rejects an unknown --input-format before any file is read
// ("" detects the format of each file).
func InputFormat(name string) error {
	if name == "" {
		return nil
	}
	if _, err := loader.Lookup(name); err != nil {
		return bad("input-format", "--input-format: %v", err)
	}
	return nil
}

// Metric resolves the ruler flags, the calibration file and the model
// table into cfg: their names and values as given (hashed and reported)
// and the rulers they choose, resolved per tokenizer generation
// (cfg.Rulers).
func Metric(cfg *analysis.Config, in MetricInput, rulers, overhead string) error {
	spec, err := rulerSpec(cfg, in, rulers, overhead)
	if err != nil {
		return err
	}
	if cfg.Models, err = Models(in.Models); err != nil {
		return err
	}
	spec.Calibration, spec.Models = cfg.Calibration, cfg.Models
	if cfg.Rulers, err = tokens.NewRulerSet(spec); err != nil {
		return bad("ruler", "--ruler: %v", err)
	}
	return nil
}

// rulerSpec validates --ruler, --rulers, --overhead and reads
// --calibration into cfg; it returns the same choices as values.
func rulerSpec(cfg *analysis.Config, in MetricInput, rulers, overhead string) (tokens.RulerSpec, error) {
	var spec tokens.RulerSpec
	var err error
	if spec.Metric, err = tokens.ParseRuler(in.Ruler); err != nil {
		return spec, bad("ruler", "--ruler: %v", err)
	}
	names, err := tokens.ParseNames(rulers)
	if err != nil {
		return spec, bad("rulers", "--rulers: %v", err)
	}
	if spec.Measured, err = tokens.ParseIDs(rulers); err != nil {
		return spec, bad("rulers", "--rulers: %v", err)
	}
	var ok bool
	if spec.Overhead, ok = tokens.ParseAnchoring(overhead); !ok {
		return spec, bad("overhead", "--overhead: want first or segments, got %q", overhead)
	}
	cfg.RulerNames, cfg.Ruler, cfg.Overhead = names, in.Ruler, overhead
	if in.Calibration != "" {
		data, err := os.ReadFile(in.Calibration)
		if err != nil {
			return spec, bad("calibration", "--calibration: %v", err)
		}
		if cfg.Calibration, err = tokens.ParseFactors(data); err != nil {
			return spec, bad("calibration", "--calibration %s: %v", in.Calibration, err)
		}
	}
	return spec, nil
}

// Models reads a model table (--models), or returns nil (the shipped
// table) when path is empty.
func Models(path string) (*tokens.Models, error) {
	if path == "" {
		return nil, nil
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, bad("models", "--models: %v", err)
	}
	m, err := tokens.ParseModels(data)
	if err != nil {
		return nil, bad("models", "--models %s: %v", path, err)
	}
	return m, nil
}

// CompactionConfig reads a strategies file (--config), or returns the
// defaults when path is empty.
func CompactionConfig(path string) (*compaction.Config, error) {
	if path == "" {
		return compaction.DefaultConfig(), nil
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, bad("config", "--config: %v", err)
	}
	cfg, err := compaction.ParseConfig(data, path)
	if err != nil {
		return nil, bad("config", "--config: %v", err)
	}
	return cfg, nil
}

// Compaction builds the strategies configuration: the --config file (or
// the defaults), then --mode, --window, --strategies and each --set that
// is not an anchor threshold.
func Compaction(in StrategyInput, sets []string) (*compaction.Config, error) {
	cfg, err := CompactionBase(in)
	if err != nil {
		return nil, err
	}
	for _, kv := range sets {
		k, v, ok := strings.Cut(kv, "=")
		if !ok {
			return nil, bad("set", "--set %s: want STRATEGY.PARAM=VALUE", kv)
		}
		if strings.HasPrefix(strings.TrimSpace(k), "anchors.") {
			continue // an anchor threshold, or a bad anchors key (Thresholds)
		}
		if err := cfg.Set(strings.TrimSpace(k), strings.TrimSpace(v)); err != nil {
			return nil, bad("set", "--set: %v", err)
		}
	}
	return cfg, nil
}

// CompactionBase is Compaction without --set (tune sweeps it).
func CompactionBase(in StrategyInput) (*compaction.Config, error) {
	cfg, err := CompactionConfig(in.Config)
	if err != nil {
		return nil, err
	}
	if in.ModeSet || in.Config == "" {
		if err := cfg.Set("mode", in.Mode); err != nil {
			return nil, bad("mode", "--mode: %v", err)
		}
	}
	if in.WindowSet {
		if in.Window < 0 {
			return nil, bad("window", "--window: want a positive number of tokens")
		}
		cfg.Window = in.Window
	}
	if s := in.Strategies; s != "" {
		cfg.Strategies = nil
		for _, id := range strings.Split(s, ",") {
			id = strings.TrimSpace(id)
			if _, err := compaction.SpecByID(id); err != nil {
				return nil, bad("strategies", "--strategies: %v", err)
			}
			cfg.Strategies = append(cfg.Strategies, id)
		}
	}
	return cfg, nil
}
