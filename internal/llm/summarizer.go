package llm

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/compactbench/compactbench/internal/compaction"
)

// Options configure a Summarizer.
type Options struct {
	// Provider sends requests; nil reads the cache only (a miss falls back).
	Provider Provider
	// ProviderName keys the cache: the provider whose answers are used
	// (Provider.Name() when Provider is set).
	ProviderName string
	Model        string
	// Cache keeps answers; nil keeps none.
	Cache *Cache
	// Prompts are the templates by name (compaction.BuiltinPrompts, with
	// the user's files over them).
	Prompts map[string]*compaction.Prompt
	// Price bills the model's usage.
	Price compaction.Price
	// Concurrency bounds requests in flight (default 4).
	Concurrency int
	// BudgetTokens and BudgetUSD stop sending requests once the run's
	// model usage reaches them (0: no limit); later summaries fall back.
	BudgetTokens int64
	BudgetUSD    float64
	// Timeout bounds one attempt (default 120 s).
	Timeout time.Duration
	// DefaultMaxTokens caps summaries whose strategy sets no cap (4,096).
	DefaultMaxTokens int
	// Delays are waited before each attempt: the seeds' 0, 1,000 and
	// 2,000 ms by default; their length is the number of attempts.
	Delays []time.Duration
	// Sleep waits (tests inject a clock); it returns early with ctx's error.
	Sleep func(ctx context.Context, d time.Duration) error
	// Context cancels waiting and requests (an interrupted run).
	Context context.Context
	// OnUpdate is called after each summary with the running counts (for a
	// progress bar); it may be called from several goroutines.
	OnUpdate func(Stats)
}

// SeedDelays are the seeds' retry delays: three attempts.
var SeedDelays = []time.Duration{0, 1000 * time.Millisecond, 2000 * time.Millisecond}

// Stats count a run's summaries by outcome and the model usage.
type Stats struct {
	Requests     int64 // HTTP requests sent (attempts)
	LLM          int64 // summaries answered by the model in this run
	Cached       int64 // summaries read from the cache
	Misses       int64 // cache-only misses (fell back)
	Failed       int64 // summaries that fell back after failed attempts
	OverBudget   int64 // summaries that fell back because the budget was spent
	InputTokens  int64
	OutputTokens int64
	// USD is the model usage of this run's requests (cache hits excluded).
	USD float64
}

// Summarizer is a compaction.Summarizer backed by a model.
type Summarizer struct {
	o   Options
	sem chan struct{}

	requests, llm, cached, misses, failed, over, in, out atomic.Int64
	mu                                                   sync.Mutex
	usd                                                  float64
}

// New builds a Summarizer; Options' zero values get their defaults.
func New(o Options) *Summarizer {
	if o.Concurrency <= 0 {
		o.Concurrency = 4
	}
	if o.Timeout <= 0 {
		o.Timeout = 120 * time.Second
	}
	if o.DefaultMaxTokens <= 0 {
		o.DefaultMaxTokens = 4096
	}
	if o.Delays == nil {
		o.Delays = SeedDelays
	}
	if o.Sleep == nil {
		o.Sleep = sleep
	}
	if o.Context == nil {
		o.Context = context.Background()
	}
	if o.Provider != nil && o.ProviderName == "" {
		o.ProviderName = o.Provider.Name()
	}
	return &Summarizer{o: o, sem: make(chan struct{}, o.Concurrency)}
}

func sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Stats returns the running counts.
func (s *Summarizer) Stats() Stats {
	s.mu.Lock()
	usd := s.usd
	s.mu.Unlock()
	return Stats{Requests: s.requests.Load(), LLM: s.llm.Load(), Cached: s.cached.Load(), Misses: s.misses.Load(),
		Failed: s.failed.Load(), OverBudget: s.over.Load(), InputTokens: s.in.Load(), OutputTokens: s.out.Load(), USD: usd}
}

// Summarize asks the model for a summary: from the cache when it holds the
// answer, else (budget allowing) by request with the seeds' retries; when
// no answer can be had, the strategy's extractive summary with the reason.
func (s *Summarizer) Summarize(r *compaction.SummaryRequest) compaction.Summary {
	sum := s.summarize(r)
	if sum.Source == compaction.SourceFallback {
		sum.Extractive = sum.Text
	} else {
		sum.Extractive = r.Deterministic()
	}
	if s.o.OnUpdate != nil {
		s.o.OnUpdate(s.Stats())
	}
	return sum
}

func (s *Summarizer) summarize(r *compaction.SummaryRequest) compaction.Summary {
	fallback := func(counter *atomic.Int64, attempts int, why string) compaction.Summary {
		counter.Add(1)
		return compaction.Summary{Text: r.Deterministic(), Source: compaction.SourceFallback, Err: why, Model: s.o.Model, Attempts: attempts}
	}
	p := s.o.Prompts[r.PromptName]
	if p == nil {
		return fallback(&s.failed, 0, fmt.Sprintf("no prompt %q", r.PromptName))
	}
	system, user, err := p.Render(&compaction.PromptData{Conversation: r.Input(), Previous: r.Previous, Task: r.Task, Round: r.Round})
	if err != nil {
		return fallback(&s.failed, 0, err.Error())
	}
	req := &Request{Model: s.o.Model, System: system, User: user, MaxTokens: r.MaxOutputTokens, Temperature: r.Temperature}
	if req.MaxTokens <= 0 {
		req.MaxTokens = s.o.DefaultMaxTokens
	}
	key := Key(s.o.ProviderName, p.Source, req)
	if s.o.Cache != nil {
		if e, ok := s.o.Cache.Get(key); ok {
			s.cached.Add(1)
			return compaction.Summary{Text: e.Text, Source: compaction.SourceCache, Model: e.Model,
				InputTokens: e.InputTokens, OutputTokens: e.OutputTokens, CostUSD: s.o.Price.USD(e.InputTokens, e.OutputTokens)}
		}
	}
	if s.o.Provider == nil {
		return fallback(&s.misses, 0, "not in the summary cache")
	}
	if s.spent() {
		return fallback(&s.over, 0, "budget reached")
	}
	s.sem <- struct{}{}
	defer func() { <-s.sem }()
	var last error
	attempts := 0
	for _, d := range s.o.Delays {
		if err := s.o.Sleep(s.o.Context, d); err != nil {
			last = err
			break
		}
		attempts++
		s.requests.Add(1)
		ctx, cancel := context.WithTimeout(s.o.Context, s.o.Timeout)
		resp, err := s.o.Provider.Complete(ctx, req)
		cancel()
		if err == nil {
			s.charge(resp)
			s.llm.Add(1)
			if s.o.Cache != nil {
				if err := s.o.Cache.Put(key, &Entry{Provider: s.o.ProviderName, Model: s.o.Model, Prompt: r.PromptName,
					Text: resp.Text, InputTokens: resp.InputTokens, OutputTokens: resp.OutputTokens}); err != nil {
					last = err // the answer stands; the cache write is reported below
				}
			}
			sum := compaction.Summary{Text: resp.Text, Source: compaction.SourceLLM, Model: s.o.Model, Attempts: attempts,
				InputTokens: resp.InputTokens, OutputTokens: resp.OutputTokens, CostUSD: s.o.Price.USD(resp.InputTokens, resp.OutputTokens)}
			if last != nil {
				sum.Err = last.Error()
			}
			return sum
		}
		last = err
		if !Retryable(err) || s.o.Context.Err() != nil {
			break
		}
	}
	return fallback(&s.failed, attempts, fmt.Sprintf("%d attempt(s): %v", attempts, last))
}

// spent reports whether the budget is used up.
func (s *Summarizer) spent() bool {
	if s.o.BudgetTokens > 0 && s.in.Load()+s.out.Load() >= s.o.BudgetTokens {
		return true
	}
	if s.o.BudgetUSD > 0 {
		s.mu.Lock()
		defer s.mu.Unlock()
		return s.usd >= s.o.BudgetUSD
	}
	return false
}

func (s *Summarizer) charge(r *Response) {
	s.in.Add(int64(r.InputTokens))
	s.out.Add(int64(r.OutputTokens))
	s.mu.Lock()
	s.usd += s.o.Price.USD(r.InputTokens, r.OutputTokens)
	s.mu.Unlock()
}

// Identity describes what shapes the summaries, for the run's config hash:
// provider, model and each prompt's source hash.
func (s *Summarizer) Identity() string {
	id := s.o.ProviderName + ":" + s.o.Model
	for _, name := range compaction.PromptNames() {
		if p := s.o.Prompts[name]; p != nil {
			id += ";" + name + "=" + Key("", p.Source, &Request{})[:12]
		}
	}
	return id
}
