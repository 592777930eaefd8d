package compaction

import (
	"strings"

	"github.com/compactbench/compactbench/internal/tokens"
)

// Cost model (docs/metrics.md, cost). Every simulated call bills its
// prompt with prompt caching: the prefix unchanged since the previous call
// (the overhead and the leading context messages) is a cache read at 0.1×
// the input price; the rest is written to the cache at 1.25× (Claude Code
// marks the end of the prompt for caching, so everything new is written).
// A compaction replaces the prefix, so the next call writes it anew. Each
// call also pays its recorded output tokens (the same for every strategy:
// the future is the recording's). A compaction that summarizes pays a
// summarizer call: the summarized messages and the previous summary plus a
// fixed prompt as uncached input, the summary as output. Strategies that
// only drop or mask content call no model.
//
// cost_ratio is the cost of a strategy's replay over the cost of the replay
// without compaction (which may exceed the window: it is the reference, not
// a possible run).

// Price is a model's price per million tokens.
type Price struct {
	Model  string  `yaml:"model"` // prefix of the model name; "" matches any
	Input  float64 `yaml:"input"`
	Output float64 `yaml:"output"`
}

// CacheReadFactor and CacheWriteFactor scale the input price (5-minute cache).
const (
	CacheReadFactor  = 0.1
	CacheWriteFactor = 1.25
)

// PriceOf finds a model's price: the first of prices (a strategies file's
// own) whose prefix matches, else the model table's entry (nil: the shipped
// one). The summarizer bills its own model calls with it.
func PriceOf(prices []Price, models *tokens.Models, model string) Price {
	for _, p := range prices {
		if strings.HasPrefix(model, p.Model) {
			return p
		}
	}
	e := models.Lookup(model)
	return Price{Model: e.Pattern, Input: e.Input, Output: e.OutputPrice}
}

// bill accumulates a replay's cost in USD.
type bill struct {
	p   Price
	usd float64
}

// call bills one API call: cached read, written rest, and output.
func (b *bill) call(prompt, cacheRead, output int) {
	read := min(cacheRead, prompt)
	b.usd += (float64(read)*CacheReadFactor + float64(prompt-read)*CacheWriteFactor) * b.p.Input / 1e6
	b.usd += float64(output) * b.p.Output / 1e6
}

// summarizer bills one summarizer call.
func (b *bill) summarizer(input, output int) {
	b.usd += b.p.USD(input, output)
}

// USD is the price of a call with the given uncached input and output.
func (p Price) USD(input, output int) float64 {
	return (float64(input)*p.Input + float64(output)*p.Output) / 1e6
}
