package llm

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/compactbench/compactbench/internal/compaction"
)

// server is a real HTTP server on loopback that answers in turn with the
// given handlers (the last one repeats) and counts requests.
type server struct {
	*httptest.Server
	hits     atomic.Int64
	mu       sync.Mutex
	bodies   []map[string]any
	headers  []http.Header
	handlers []http.HandlerFunc
}

func newServer(t *testing.T, handlers ...http.HandlerFunc) *server {
	s := &server{handlers: handlers}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := int(s.hits.Add(1)) - 1
		var body map[string]any
		json.NewDecoder(r.Body).Decode(&body)
		s.mu.Lock()
		s.bodies = append(s.bodies, body)
		s.headers = append(s.headers, r.Header.Clone())
		s.mu.Unlock()
		s.handlers[min(n, len(s.handlers)-1)](w, r)
	}))
	t.Cleanup(s.Close)
	return s
}

func anthropicOK(text string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, `{"content":[{"type":"text","text":%q}],"usage":{"input_tokens":1000,"output_tokens":200}}`, text)
	}
}

func status(code int) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) { http.Error(w, `{"error":"busy"}`, code) }
}

// clock records the waits instead of sleeping.
type clock struct {
	mu    sync.Mutex
	waits []time.Duration
}

func (c *clock) sleep(ctx context.Context, d time.Duration) error {
	c.mu.Lock()
	c.waits = append(c.waits, d)
	c.mu.Unlock()
	return ctx.Err()
}

func request(conv string) *compaction.SummaryRequest {
	return &compaction.SummaryRequest{Strategy: "codelet", Round: 1, PromptName: "codelet", MaxOutputTokens: 1024,
		Input: func() string { return conv }, Deterministic: func() string { return "EXTRACTIVE" }}
}

func prompts(t *testing.T) map[string]*compaction.Prompt {
	p, err := compaction.BuiltinPrompts()
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func newSummarizer(t *testing.T, srv *server, c *clock, cache *Cache) *Summarizer {
	return New(Options{Provider: &Anthropic{BaseURL: srv.URL, Key: "sk-test"}, Model: "claude-haiku-4-5", Cache: cache,
		Prompts: prompts(t), Price: compaction.Price{Input: 1, Output: 5}, Sleep: c.sleep, Timeout: 200 * time.Millisecond})
}

// TestRetries: the seeds' reliability rules, against a real server.
func TestRetries(t *testing.T) {
	ok := anthropicOK("the summary")
	slow := func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-time.After(2 * time.Second):
		case <-r.Context().Done():
		}
	}
	malformed := func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, `{"content": [`) }
	cases := []struct {
		name     string
		handlers []http.HandlerFunc
		source   string
		hits     int
		waits    []time.Duration
		err      string
	}{
		{"success", []http.HandlerFunc{ok}, compaction.SourceLLM, 1, []time.Duration{0}, ""},
		{"429 then success", []http.HandlerFunc{status(429), ok}, compaction.SourceLLM, 2, []time.Duration{0, time.Second}, ""},
		{"529 overloaded then success", []http.HandlerFunc{status(529), ok}, compaction.SourceLLM, 2, []time.Duration{0, time.Second}, ""},
		{"500 three times", []http.HandlerFunc{status(500)}, compaction.SourceFallback, 3, []time.Duration{0, time.Second, 2 * time.Second}, "HTTP 500"},
		{"timeout", []http.HandlerFunc{slow}, compaction.SourceFallback, 3, []time.Duration{0, time.Second, 2 * time.Second}, "deadline exceeded"},
		{"malformed JSON", []http.HandlerFunc{malformed, ok}, compaction.SourceLLM, 2, []time.Duration{0, time.Second}, ""},
		{"400 is not retried", []http.HandlerFunc{status(400)}, compaction.SourceFallback, 1, []time.Duration{0}, "HTTP 400"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			srv := newServer(t, tc.handlers...)
			c := &clock{}
			s := newSummarizer(t, srv, c, nil)
			got := s.Summarize(request("[user]: fix the bug"))
			if got.Source != tc.source || int(srv.hits.Load()) != tc.hits || got.Attempts != tc.hits {
				t.Fatalf("source %s after %d requests (%d attempts), want %s after %d; err %q", got.Source, srv.hits.Load(), got.Attempts, tc.source, tc.hits, got.Err)
			}
			if fmt.Sprint(c.waits) != fmt.Sprint(tc.waits) {
				t.Errorf("waited %v, want %v", c.waits, tc.waits)
			}
			if !strings.Contains(got.Err, tc.err) {
				t.Errorf("error %q, want it to say %q", got.Err, tc.err)
			}
			switch got.Source {
			case compaction.SourceLLM:
				if got.Text != "the summary" || got.InputTokens != 1000 || got.OutputTokens != 200 || got.CostUSD != 0.002 {
					t.Errorf("summary %+v", got)
				}
			case compaction.SourceFallback:
				if got.Text != "EXTRACTIVE" || got.CostUSD != 0 {
					t.Errorf("fallback %+v", got)
				}
			}
		})
	}
}

// TestAnthropicRequestShape: the Messages request carries the key as a
// header, the API version, the model, the seeds' 1,024-token cap and the
// codelet prompt with the conversation.
func TestAnthropicRequestShape(t *testing.T) {
	srv := newServer(t, anthropicOK("s"))
	newSummarizer(t, srv, &clock{}, nil).Summarize(request("[user]: CONVERSATION"))
	h, b := srv.headers[0], srv.bodies[0]
	if h.Get("x-api-key") != "sk-test" || h.Get("anthropic-version") == "" {
		t.Errorf("headers %v", h)
	}
	msgs, _ := b["messages"].([]any)
	if b["model"] != "claude-haiku-4-5" || b["max_tokens"] != float64(1024) || len(msgs) != 1 {
		t.Fatalf("body %v", b)
	}
	content := msgs[0].(map[string]any)["content"].(string)
	if !strings.HasPrefix(content, "You are helping continue a conversation") || !strings.HasSuffix(content, "Conversation to summarize:\n[user]: CONVERSATION") {
		t.Errorf("user message %q", content)
	}
}

// TestOpenAICompatible: chat completions with a system message, and the
// usage the server reports.
func TestOpenAICompatible(t *testing.T) {
	srv := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/v1/chat/completions" {
			http.NotFound(w, r)
			return
		}
		fmt.Fprint(w, `{"choices":[{"message":{"role":"assistant","content":"local summary"}}],"usage":{"prompt_tokens":300,"completion_tokens":40}}`)
	})
	s := New(Options{Provider: &OpenAI{BaseURL: srv.URL + "/v1"}, Model: "qwen3", Prompts: prompts(t), Sleep: (&clock{}).sleep})
	temp := 0.3
	got := s.Summarize(&compaction.SummaryRequest{Strategy: "window", Round: 2, PromptName: "window", Previous: "P", Task: "T", MaxOutputTokens: 1000,
		Temperature: &temp, Input: func() string { return "msgs" }, Deterministic: func() string { return "E" }})
	if got.Source != compaction.SourceLLM || got.Text != "local summary" || got.InputTokens != 300 || got.OutputTokens != 40 {
		t.Fatalf("summary %+v", got)
	}
	b := srv.bodies[0]
	msgs := b["messages"].([]any)
	if len(msgs) != 2 || msgs[0].(map[string]any)["role"] != "system" || b["temperature"] != 0.3 || b["max_tokens"] != float64(1000) {
		t.Errorf("body %v", b)
	}
	if h := srv.headers[0].Get("Authorization"); h != "" {
		t.Errorf("a request without a key sent Authorization %q", h)
	}
}

// TestCheck: the preflight accepts a server that answers, and refuses an
// unreachable one and a refused key.
func TestCheck(t *testing.T) {
	up := newServer(t, status(404))
	if err := (&OpenAI{BaseURL: up.URL}).Check(context.Background()); err != nil {
		t.Errorf("a server that answers 404: %v", err)
	}
	refused := newServer(t, status(401))
	if err := (&Anthropic{BaseURL: refused.URL, Key: "bad"}).Check(context.Background()); err == nil || !strings.Contains(err.Error(), "refused the key") {
		t.Errorf("401: %v", err)
	}
	down := httptest.NewServer(http.NotFoundHandler())
	url := down.URL
	down.Close()
	if err := (&OpenAI{BaseURL: url}).Check(context.Background()); err == nil || !strings.Contains(err.Error(), "cannot reach") {
		t.Errorf("closed server: %v", err)
	}
}

// TestCacheHitSendsNothing: a second run over the same requests reads every
// answer from the cache; a cache-only summarizer finds them too, and falls
// back on a request it has not seen.
func TestCacheHitSendsNothing(t *testing.T) {
	srv := newServer(t, anthropicOK("cached text"))
	cache := &Cache{Dir: t.TempDir()}
	first := newSummarizer(t, srv, &clock{}, cache).Summarize(request("conv"))
	second := newSummarizer(t, srv, &clock{}, cache).Summarize(request("conv"))
	if srv.hits.Load() != 1 || first.Source != compaction.SourceLLM || second.Source != compaction.SourceCache || second.Text != "cached text" {
		t.Fatalf("%d requests; first %+v; second %+v", srv.hits.Load(), first, second)
	}
	if second.CostUSD != first.CostUSD {
		t.Errorf("a cached answer costs %v, the request cost %v", second.CostUSD, first.CostUSD)
	}
	only := New(Options{ProviderName: "anthropic", Model: "claude-haiku-4-5", Cache: cache, Prompts: prompts(t), Price: compaction.Price{Input: 1, Output: 5}})
	if got := only.Summarize(request("conv")); got.Source != compaction.SourceCache {
		t.Errorf("cache-only: %+v", got)
	}
	if got := only.Summarize(request("other")); got.Source != compaction.SourceFallback || got.Text != "EXTRACTIVE" || !strings.Contains(got.Err, "cache") {
		t.Errorf("cache-only miss: %+v", got)
	}
	if st := only.Stats(); st.Cached != 1 || st.Misses != 1 || st.Requests != 0 {
		t.Errorf("stats %+v", st)
	}
	// A changed prompt template is another key.
	p := prompts(t)
	alt, err := compaction.ParsePrompt("codelet", "---\nShort: {{.Conversation}}")
	if err != nil {
		t.Fatal(err)
	}
	p["codelet"] = alt
	s := New(Options{Provider: &Anthropic{BaseURL: srv.URL, Key: "k"}, Model: "claude-haiku-4-5", Cache: cache, Prompts: p, Sleep: (&clock{}).sleep})
	if got := s.Summarize(request("conv")); got.Source != compaction.SourceLLM || srv.hits.Load() != 2 {
		t.Errorf("an edited prompt was answered from the cache: %+v", got)
	}
}

// TestConcurrentRunsShareACache: two summarizers write one directory at
// once; every entry is whole and a third run finds them all.
func TestConcurrentRunsShareACache(t *testing.T) {
	srv := newServer(t, anthropicOK(strings.Repeat("long summary text ", 500)))
	dir := t.TempDir()
	var wg sync.WaitGroup
	for run := 0; run < 2; run++ {
		s := newSummarizer(t, srv, &clock{}, &Cache{Dir: dir})
		for i := 0; i < 40; i++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				s.Summarize(request(fmt.Sprintf("conversation %d", i)))
			}()
		}
	}
	wg.Wait()
	files, _ := filepath.Glob(filepath.Join(dir, "*", "*"))
	if len(files) != 40 {
		t.Fatalf("%d cache files, want 40 (no temporary file left)", len(files))
	}
	for _, f := range files {
		data, err := os.ReadFile(f)
		var e Entry
		if err != nil || json.Unmarshal(data, &e) != nil || !strings.HasPrefix(e.Text, "long summary") {
			t.Fatalf("%s: broken entry", f)
		}
	}
	third := newSummarizer(t, srv, &clock{}, &Cache{Dir: dir})
	before := srv.hits.Load()
	for i := 0; i < 40; i++ {
		third.Summarize(request(fmt.Sprintf("conversation %d", i)))
	}
	if srv.hits.Load() != before || third.Stats().Cached != 40 {
		t.Errorf("the third run sent %d requests", srv.hits.Load()-before)
	}
}

// TestBudget: once the run's usage reaches the budget, summaries fall back
// without a request.
func TestBudget(t *testing.T) {
	srv := newServer(t, anthropicOK("s"))
	s := New(Options{Provider: &Anthropic{BaseURL: srv.URL, Key: "k"}, Model: "m", Prompts: prompts(t), BudgetTokens: 1500,
		Concurrency: 1, Sleep: (&clock{}).sleep})
	var sources []string
	for i := 0; i < 3; i++ {
		sources = append(sources, s.Summarize(request(fmt.Sprint(i))).Source)
	}
	if fmt.Sprint(sources) != "[llm llm fallback]" || srv.hits.Load() != 2 || s.Stats().OverBudget != 1 {
		t.Errorf("sources %v after %d requests; stats %+v", sources, srv.hits.Load(), s.Stats())
	}
}

// TestCancelStopsWaiting: an interrupted run stops retrying at once.
func TestCancelStopsWaiting(t *testing.T) {
	srv := newServer(t, status(503))
	ctx, cancel := context.WithCancel(context.Background())
	s := New(Options{Provider: &Anthropic{BaseURL: srv.URL, Key: "k"}, Model: "m", Prompts: prompts(t), Context: ctx})
	cancel()
	start := time.Now()
	got := s.Summarize(request("x"))
	if got.Source != compaction.SourceFallback || time.Since(start) > 500*time.Millisecond {
		t.Errorf("%+v after %v", got, time.Since(start))
	}
}
