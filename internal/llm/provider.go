// Package llm sends compaction summaries to a language model: the
// Anthropic Messages API or any OpenAI-compatible chat-completions server
// (Ollama, llama.cpp's server, vLLM, LM Studio). It retries as the seeds'
// LLMSummaryProvider does, keeps every answer in a content-addressed cache
// on disk, limits concurrency and spending, and falls back to the
// strategy's extractive summary when no answer can be had. It is the only
// package that talks to a network; the replay itself stays pure and calls
// it through compaction.Summarizer.
package llm

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
)

// Request is one completion: a system prompt (may be empty) and one user
// message.
type Request struct {
	Model       string
	System      string
	User        string
	MaxTokens   int
	Temperature *float64
}

// Response is a model's answer and the usage the server reported.
type Response struct {
	Text         string
	InputTokens  int
	OutputTokens int
}

// Provider sends completions to one kind of server.
type Provider interface {
	// Name is the provider's name as --summarizer gives it.
	Name() string
	// Complete sends one request.
	Complete(ctx context.Context, r *Request) (*Response, error)
	// Check asks the server whether it is there and takes the key, before
	// any work: a nil error means requests can be sent.
	Check(ctx context.Context) error
}

// StatusError is an HTTP answer other than 200.
type StatusError struct {
	Status int
	// Body is the start of the answer's body, for the error message.
	Body string
}

func (e *StatusError) Error() string {
	return fmt.Sprintf("HTTP %d: %s", e.Status, e.Body)
}

// MalformedError is a 200 answer that holds no usable text.
type MalformedError struct{ Reason string }

func (e *MalformedError) Error() string { return "malformed answer: " + e.Reason }

// Retryable reports whether an error is worth another attempt, as the
// seeds' summarizer retries: rate limits (429), server errors (5xx,
// Anthropic's 529 overloaded), timeouts, dropped connections and malformed
// answers. Refusals (400, 401, 403, 404) are not.
func Retryable(err error) bool {
	var se *StatusError
	if errors.As(err, &se) {
		return se.Status == http.StatusTooManyRequests || se.Status >= 500
	}
	var me *MalformedError
	if errors.As(err, &me) {
		return true
	}
	return !errors.Is(err, context.Canceled) // timeouts and transport errors
}

// maxBody bounds what is read of an answer (a summary is a few KB).
const maxBody = 8 << 20

// post sends a JSON body and decodes a 200 answer into out.
func post(ctx context.Context, c *http.Client, url string, header http.Header, body, out any) error {
	data, err := json.Marshal(body)
	if err != nil {
		return err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(data))
	if err != nil {
		return err
	}
	req.Header = header.Clone()
	req.Header.Set("Content-Type", "application/json")
	resp, err := c.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, maxBody))
	if err != nil {
		return err
	}
	if resp.StatusCode != http.StatusOK {
		return &StatusError{Status: resp.StatusCode, Body: excerpt(raw)}
	}
	if err := json.Unmarshal(raw, out); err != nil {
		return &MalformedError{Reason: err.Error()}
	}
	return nil
}

// check sends a GET and accepts any answer but a refused key; a server that
// cannot be reached is an error.
func check(ctx context.Context, c *http.Client, url string, header http.Header) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	req.Header = header.Clone()
	resp, err := c.Do(req)
	if err != nil {
		return fmt.Errorf("cannot reach %s: %w", url, err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
	if resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden {
		return fmt.Errorf("%s refused the key: %w", url, &StatusError{Status: resp.StatusCode, Body: excerpt(raw)})
	}
	return nil
}

// excerpt is a short, single-line start of an answer's body.
func excerpt(b []byte) string {
	s := strings.Join(strings.Fields(string(b)), " ")
	if len(s) > 200 {
		s = s[:200] + "…"
	}
	return s
}

// Anthropic speaks the Messages API.
type Anthropic struct {
	// BaseURL is the API root (https://api.anthropic.com by default).
	BaseURL string
	// Key is the API key (ANTHROPIC_API_KEY); it is sent as a header only.
	Key    string
	Client *http.Client
}

// AnthropicURL is the Anthropic API's root.
const AnthropicURL = "https://api.anthropic.com"

// anthropicVersion is the Messages API version header.
const anthropicVersion = "2023-06-01"

// Name is "anthropic".
func (a *Anthropic) Name() string { return "anthropic" }

func (a *Anthropic) header() http.Header {
	h := http.Header{}
	h.Set("x-api-key", a.Key)
	h.Set("anthropic-version", anthropicVersion)
	return h
}

func (a *Anthropic) base() string { return strings.TrimRight(orDefault(a.BaseURL, AnthropicURL), "/") }

// Complete sends one Messages request.
func (a *Anthropic) Complete(ctx context.Context, r *Request) (*Response, error) {
	type message struct {
		Role    string `json:"role"`
		Content string `json:"content"`
	}
	body := struct {
		Model       string    `json:"model"`
		MaxTokens   int       `json:"max_tokens"`
		System      string    `json:"system,omitempty"`
		Messages    []message `json:"messages"`
		Temperature *float64  `json:"temperature,omitempty"`
	}{r.Model, r.MaxTokens, r.System, []message{{"user", r.User}}, r.Temperature}
	var out struct {
		Content []struct {
			Type string `json:"type"`
			Text string `json:"text"`
		} `json:"content"`
		Usage *struct {
			Input  int `json:"input_tokens"`
			Output int `json:"output_tokens"`
		} `json:"usage"`
	}
	if err := post(ctx, client(a.Client), a.base()+"/v1/messages", a.header(), body, &out); err != nil {
		return nil, err
	}
	var text strings.Builder
	for _, c := range out.Content {
		if c.Type == "text" {
			text.WriteString(c.Text)
		}
	}
	if strings.TrimSpace(text.String()) == "" || out.Usage == nil {
		return nil, &MalformedError{Reason: "no text content or no usage"}
	}
	return &Response{Text: text.String(), InputTokens: out.Usage.Input, OutputTokens: out.Usage.Output}, nil
}

// Check lists the models: the server is there and takes the key.
func (a *Anthropic) Check(ctx context.Context) error {
	return check(ctx, client(a.Client), a.base()+"/v1/models", a.header())
}

// OpenAI speaks OpenAI-compatible chat completions.
type OpenAI struct {
	// BaseURL is the API root including its version path, e.g.
	// http://localhost:11434/v1 (Ollama, the default), http://localhost:8080/v1
	// (llama.cpp), http://localhost:1234/v1 (LM Studio).
	BaseURL string
	// Key is optional (OPENAI_API_KEY); local servers need none.
	Key    string
	Client *http.Client
}

// OllamaURL is the default OpenAI-compatible root: a local Ollama.
const OllamaURL = "http://localhost:11434/v1"

// Name is "openai".
func (o *OpenAI) Name() string { return "openai" }

func (o *OpenAI) header() http.Header {
	h := http.Header{}
	if o.Key != "" {
		h.Set("Authorization", "Bearer "+o.Key)
	}
	return h
}

func (o *OpenAI) base() string { return strings.TrimRight(orDefault(o.BaseURL, OllamaURL), "/") }

// Complete sends one chat-completions request.
func (o *OpenAI) Complete(ctx context.Context, r *Request) (*Response, error) {
	type message struct {
		Role    string `json:"role"`
		Content string `json:"content"`
	}
	msgs := []message{}
	if r.System != "" {
		msgs = append(msgs, message{"system", r.System})
	}
	msgs = append(msgs, message{"user", r.User})
	body := struct {
		Model       string    `json:"model"`
		Messages    []message `json:"messages"`
		MaxTokens   int       `json:"max_tokens,omitempty"`
		Temperature *float64  `json:"temperature,omitempty"`
	}{r.Model, msgs, r.MaxTokens, r.Temperature}
	var out struct {
		Choices []struct {
			Message struct {
				Content string `json:"content"`
			} `json:"message"`
		} `json:"choices"`
		Usage *struct {
			Prompt     int `json:"prompt_tokens"`
			Completion int `json:"completion_tokens"`
		} `json:"usage"`
	}
	if err := post(ctx, client(o.Client), o.base()+"/chat/completions", o.header(), body, &out); err != nil {
		return nil, err
	}
	if len(out.Choices) == 0 || strings.TrimSpace(out.Choices[0].Message.Content) == "" {
		return nil, &MalformedError{Reason: "no choice with content"}
	}
	resp := &Response{Text: out.Choices[0].Message.Content}
	if out.Usage != nil {
		resp.InputTokens, resp.OutputTokens = out.Usage.Prompt, out.Usage.Completion
	}
	return resp, nil
}

// Check lists the models: the server is there (and takes the key).
func (o *OpenAI) Check(ctx context.Context) error {
	return check(ctx, client(o.Client), o.base()+"/models", o.header())
}

func client(c *http.Client) *http.Client {
	if c == nil {
		return http.DefaultClient
	}
	return c
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}
