package main

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/compactbench/compactbench/internal/analysis"
	"github.com/compactbench/compactbench/internal/compaction"
	"github.com/compactbench/compactbench/internal/llm"
	"github.com/compactbench/compactbench/internal/plan"
	"github.com/compactbench/compactbench/internal/tokens"
)

// Summarizer names, as --summarizer takes them.
const (
	summarizerExtractive = "extractive"
	summarizerAnthropic  = "anthropic"
	summarizerOpenAI     = "openai"
	summarizerCache      = "cache"
)

// defaultAnthropicModel is --llm-model's default with --summarizer anthropic.
const defaultAnthropicModel = "claude-haiku-4-5"

// summarizerFlags are the flags of model summaries (run and tune).
func summarizerFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "summarizer", Value: summarizerExtractive, Usage: "who writes the strategies' summaries: extractive (built in, offline), " +
			"anthropic (Messages API, key from ANTHROPIC_API_KEY), openai (an OpenAI-compatible server: Ollama, llama.cpp, vLLM, LM Studio; " +
			"--llm-url, optional OPENAI_API_KEY) or cache (answers in --llm-cache only)"},
		&cli.StringFlag{Name: "llm-model", Usage: "model that writes summaries (anthropic: default " + defaultAnthropicModel + "; openai: required)"},
		&cli.StringFlag{Name: "llm-url", Usage: "API root `URL` (anthropic: " + llm.AnthropicURL + "; openai: " + llm.OllamaURL + ")"},
		&cli.StringFlag{Name: "llm-provider", Value: summarizerAnthropic, Usage: "with --summarizer cache: whose answers to read (anthropic or openai)"},
		&cli.StringFlag{Name: "llm-cache", Usage: "summary cache `DIR` (default: compactbench/summaries under the user cache directory); off: no cache"},
		&cli.IntFlag{Name: "llm-concurrency", Value: 4, Usage: "model requests in flight at once"},
		&cli.StringFlag{Name: "llm-budget", Usage: "stop asking the model once the run used this much: `N` tokens (e.g. 500000) or dollars (e.g. $2.50); later summaries fall back to extractive"},
		&cli.DurationFlag{Name: "llm-timeout", Value: 2 * time.Minute, Usage: "limit of one model request"},
		&cli.StringSliceFlag{Name: "llm-prompt", Usage: "replace a summary prompt, `NAME=FILE` (repeatable; names: " + strings.Join(compaction.PromptNames(), ", ") + ")"},
	}
}

// llmSetup is a model summarizer chosen with flags, built when the run
// starts (it needs the run's context) after a preflight check.
type llmSetup struct {
	Name    string
	Options llm.Options
	// Summarizer is set by start.
	Summarizer *llm.Summarizer
}

// summarizerFromFlags reads the summarizer flags; nil means extractive. A
// missing key, model or prompt file is a usage error.
func summarizerFromFlags(c *cli.Context, cc *compaction.Config, models *tokens.Models) (*llmSetup, error) {
	name := c.String("summarizer")
	if name == summarizerExtractive {
		for _, f := range []string{"llm-model", "llm-url", "llm-cache", "llm-budget", "llm-prompt"} {
			if c.IsSet(f) {
				return nil, usageErr("--%s needs --summarizer anthropic, openai or cache", f)
			}
		}
		return nil, nil
	}
	s := &llmSetup{Name: name}
	o := &s.Options
	o.Model = c.String("llm-model")
	for _, step := range []func(*cli.Context, *llm.Options) error{llmProvider, llmCache, llmLimits, llmPrompts} {
		if err := step(c, o); err != nil {
			return nil, err
		}
	}
	o.Price = compaction.PriceOf(cc.Prices, models, o.Model)
	return s, nil
}

// llmProvider sets the provider --summarizer names (for cache, whose
// answers to read) and the model's default.
func llmProvider(c *cli.Context, o *llm.Options) error {
	client := cleanHTTPClient()
	switch name := c.String("summarizer"); name {
	case summarizerAnthropic:
		key := os.Getenv("ANTHROPIC_API_KEY")
		if key == "" {
			return usageErr("--summarizer anthropic: ANTHROPIC_API_KEY is not set")
		}
		if o.Model == "" {
			o.Model = defaultAnthropicModel
		}
		o.Provider = &llm.Anthropic{BaseURL: c.String("llm-url"), Key: key, Client: client}
	case summarizerOpenAI:
		if o.Model == "" {
			return usageErr("--summarizer openai: --llm-model is required (the name your server knows, e.g. qwen3:8b)")
		}
		o.Provider = &llm.OpenAI{BaseURL: c.String("llm-url"), Key: os.Getenv("OPENAI_API_KEY"), Client: client}
	case summarizerCache:
		return llmCacheOnly(c, o)
	default:
		return usageErr("--summarizer: unknown summarizer %q (known: extractive, anthropic, openai, cache)", name)
	}
	return nil
}

// llmCacheOnly is --summarizer cache: answers already cached, no provider.
func llmCacheOnly(c *cli.Context, o *llm.Options) error {
	o.ProviderName = c.String("llm-provider")
	if o.ProviderName != summarizerAnthropic && o.ProviderName != summarizerOpenAI {
		return usageErr("--llm-provider: want anthropic or openai, not %q", o.ProviderName)
	}
	if o.Model == "" {
		if o.ProviderName != summarizerAnthropic {
			return usageErr("--summarizer cache --llm-provider openai: --llm-model is required")
		}
		o.Model = defaultAnthropicModel
	}
	if c.String("llm-cache") == "off" {
		return usageErr("--summarizer cache needs a cache (--llm-cache is off)")
	}
	return nil
}

// llmCache sets the summary cache (--llm-cache; "off": none).
func llmCache(c *cli.Context, o *llm.Options) error {
	switch dir := c.String("llm-cache"); dir {
	case "off":
	case "":
		d, err := llm.DefaultCacheDir()
		if err != nil {
			return usageErr("--llm-cache: %v", err)
		}
		o.Cache = &llm.Cache{Dir: d}
	default:
		o.Cache = &llm.Cache{Dir: dir}
	}
	return nil
}

// llmLimits reads --llm-concurrency, --llm-timeout and --llm-budget.
func llmLimits(c *cli.Context, o *llm.Options) error {
	if o.Concurrency = c.Int("llm-concurrency"); o.Concurrency < 1 {
		return usageErr("--llm-concurrency: want at least 1, not %d", o.Concurrency)
	}
	if o.Timeout = c.Duration("llm-timeout"); o.Timeout <= 0 {
		return usageErr("--llm-timeout: want a positive duration")
	}
	var err error
	if o.BudgetTokens, o.BudgetUSD, err = parseBudget(c.String("llm-budget")); err != nil {
		return usageErr("--llm-budget: %v", err)
	}
	return nil
}

// llmPrompts loads the built-in prompts and each --llm-prompt NAME=FILE.
func llmPrompts(c *cli.Context, o *llm.Options) error {
	var err error
	if o.Prompts, err = compaction.BuiltinPrompts(); err != nil {
		return err
	}
	for _, kv := range c.StringSlice("llm-prompt") {
		name, file, ok := strings.Cut(kv, "=")
		if !ok || o.Prompts[name] == nil {
			return usageErr("--llm-prompt %s: want NAME=FILE with NAME one of %s", kv, strings.Join(compaction.PromptNames(), ", "))
		}
		data, err := os.ReadFile(file)
		if err != nil {
			return usageErr("--llm-prompt: %v", err)
		}
		if o.Prompts[name], err = compaction.ParsePrompt(name, string(data)); err != nil {
			return usageErr("--llm-prompt %s: %v", file, err)
		}
	}
	return nil
}

// cleanHTTPClient is the client for model servers: no proxy from the
// environment is needed for loopback servers, and redirects are not
// followed (an API answers where it is asked).
func cleanHTTPClient() *http.Client {
	return &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
}

// parseBudget reads "N" (tokens) or "$X" / "Xusd" (dollars).
func parseBudget(s string) (tokens int64, usd float64, err error) {
	s = strings.TrimSpace(strings.ToLower(s))
	if s == "" {
		return 0, 0, nil
	}
	if d, ok := strings.CutPrefix(s, "$"); ok {
		usd, err = strconv.ParseFloat(d, 64)
	} else if d, ok := strings.CutSuffix(s, "usd"); ok {
		usd, err = strconv.ParseFloat(strings.TrimSpace(d), 64)
	} else {
		tokens, err = strconv.ParseInt(strings.TrimSuffix(s, "tokens"), 10, 64)
		if err == nil && tokens <= 0 {
			err = fmt.Errorf("want a positive number of tokens")
		}
		return tokens, 0, err
	}
	if err == nil && !(usd > 0) {
		err = fmt.Errorf("want a positive number of dollars")
	}
	if err != nil {
		return 0, 0, fmt.Errorf("%q: want N tokens or $X dollars", s)
	}
	return 0, usd, nil
}

// start checks that the server is there and takes the key (a usage error
// before any work when not), builds the summarizer, and puts it in cfg.
func (s *llmSetup) start(ctx context.Context, cfg *analysis.Config) error {
	if s == nil {
		return nil
	}
	if err := s.begin(ctx); err != nil {
		return err
	}
	s.apply(cfg)
	return nil
}

// startAll is start for every setting of a sweep: one summarizer (and
// cache) serves them all.
func (s *llmSetup) startAll(ctx context.Context, settings []plan.Setting) error {
	if s == nil {
		return nil
	}
	if err := s.begin(ctx); err != nil {
		return err
	}
	for i := range settings {
		s.apply(&settings[i].Config)
	}
	return nil
}

// begin checks the server and builds the summarizer.
func (s *llmSetup) begin(ctx context.Context) error {
	if p := s.Options.Provider; p != nil {
		cctx, cancel := context.WithTimeout(ctx, 15*time.Second)
		err := p.Check(cctx)
		cancel()
		if err != nil {
			return usageErr("--summarizer %s: %v", s.Name, err)
		}
	}
	s.Options.Context = ctx
	s.Summarizer = llm.New(s.Options)
	return nil
}

// apply makes cfg's strategies summarize with the model.
func (s *llmSetup) apply(cfg *analysis.Config) {
	cfg.Summarizer = s.Summarizer
	cfg.SummarizerID = s.Summarizer.Identity()
}

// describe is the progress bar's line of model work.
func (s *llmSetup) describe() string {
	st := s.Summarizer.Stats()
	return fmt.Sprintf("reading · summaries %d requested, %d cached, %d failed", st.LLM, st.Cached, st.Failed+st.Misses+st.OverBudget)
}
