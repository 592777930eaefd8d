package compaction

import "strings"

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

// DefaultPrices are list prices in USD per million tokens (2026); the first
// prefix that matches the model wins, the last entry matches any model.
func DefaultPrices() []Price {
	return []Price{
		{"claude-opus-4-5", 5, 25}, {"claude-opus-4-6", 5, 25}, {"claude-opus-4", 15, 75},
		{"claude-sonnet", 3, 15}, {"claude-3-5-sonnet", 3, 15}, {"claude-3-7-sonnet", 3, 15},
		{"claude-haiku-4", 1, 5}, {"claude-3-5-haiku", 0.8, 4}, {"claude-3-haiku", 0.25, 1.25},
		{"gpt-4o-mini", 0.15, 0.6}, {"gpt-4o", 2.5, 10}, {"gpt-4.1", 2, 8}, {"gpt-5", 1.25, 10},
		{"o3", 2, 8}, {"o4-mini", 1.1, 4.4},
		{"", 3, 15},
	}
}

// priceOf finds a model's price.
func priceOf(prices []Price, model string) Price {
	for _, p := range prices {
		if strings.HasPrefix(model, p.Model) {
			return p
		}
	}
	return Price{Input: 3, Output: 15}
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
	b.usd += (float64(input)*b.p.Input + float64(output)*b.p.Output) / 1e6
}

// PriceOf finds a model's price in a price list (the last resort is the
// default price): the summarizer bills its own model calls with it.
func PriceOf(prices []Price, model string) Price { return priceOf(prices, model) }

// USD is the price of a call with the given uncached input and output.
func (p Price) USD(input, output int) float64 {
	return (float64(input)*p.Input + float64(output)*p.Output) / 1e6
}
