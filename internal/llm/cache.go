package llm

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
)

// Cache keeps model answers on disk, one JSON file per request, named by a
// hash of everything that shapes the answer (Key). Files are written under a
// temporary name and renamed, so concurrent runs sharing a directory never
// see a half-written entry, and a second run over the same corpus sends no
// request. A directory can be committed so CI replays answers offline.
type Cache struct {
	Dir string
}

// Entry is one cached answer.
type Entry struct {
	Provider     string `json:"provider"`
	Model        string `json:"model"`
	Prompt       string `json:"prompt"`
	Text         string `json:"text"`
	InputTokens  int    `json:"input_tokens"`
	OutputTokens int    `json:"output_tokens"`
}

// Key is the content address of a request: provider, model, the prompt
// template's hash, the rendered system prompt and user message, and the
// sampling parameters.
func Key(provider string, promptSource string, r *Request) string {
	h := sha256.New()
	field := func(s string) {
		h.Write([]byte(strconv.Itoa(len(s))))
		h.Write([]byte{':'})
		h.Write([]byte(s))
	}
	field("compactbench-summary-v1")
	field(provider)
	field(r.Model)
	ph := sha256.Sum256([]byte(promptSource))
	field(hex.EncodeToString(ph[:]))
	field(r.System)
	field(r.User)
	field(strconv.Itoa(r.MaxTokens))
	if r.Temperature != nil {
		field(strconv.FormatFloat(*r.Temperature, 'g', -1, 64))
	} else {
		field("-")
	}
	return hex.EncodeToString(h.Sum(nil))
}

func (c *Cache) path(key string) string {
	return filepath.Join(c.Dir, key[:2], key+".json")
}

// Get reads an entry; a missing or unreadable entry is a miss.
func (c *Cache) Get(key string) (*Entry, bool) {
	data, err := os.ReadFile(c.path(key))
	if err != nil {
		return nil, false
	}
	var e Entry
	if json.Unmarshal(data, &e) != nil || e.Text == "" {
		return nil, false
	}
	return &e, true
}

// Put writes an entry atomically.
func (c *Cache) Put(key string, e *Entry) error {
	p := c.path(key)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return fmt.Errorf("summary cache: %w", err)
	}
	data, err := json.MarshalIndent(e, "", "  ")
	if err != nil {
		return err
	}
	f, err := os.CreateTemp(filepath.Dir(p), ".tmp-*")
	if err != nil {
		return fmt.Errorf("summary cache: %w", err)
	}
	_, werr := f.Write(append(data, '\n'))
	cerr := f.Close()
	if werr == nil {
		werr = cerr
	}
	if werr == nil {
		werr = os.Rename(f.Name(), p)
	}
	if werr != nil {
		os.Remove(f.Name())
		return fmt.Errorf("summary cache: %w", werr)
	}
	return nil
}

// DefaultCacheDir is the cache under the user's cache directory.
func DefaultCacheDir() (string, error) {
	d, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("no user cache directory (use --llm-cache): %w", err)
	}
	return filepath.Join(d, "compactbench", "summaries"), nil
}
