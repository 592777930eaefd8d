package compaction

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"reflect"
	"strings"

	"github.com/compactbench/compactbench/internal/tokens"
	"go.yaml.in/yaml/v3"
)

// Config is a strategies file: which strategies run, how, and every
// constant they use. All keys are optional; absent ones keep the defaults.
//
//	mode: replay            # or once
//	window: 60000           # override every model's window
//	strategies: [codelet, window, mask]
//	params:
//	  codelet: {cache_discount: 0}
//	  window: {keep_last: 20}
//	prices:
//	  - {model: claude-opus-4-6, input: 5, output: 25}
//	summary_prompt_tokens: 500
type Config struct {
	Mode       Mode
	Window     int
	Strategies []string
	// Params holds each strategy's parameters (a pointer to its params
	// struct), defaults filled in.
	Params              map[string]any
	Prices              []Price
	SummaryPromptTokens int
}

// DefaultConfig returns every strategy with its default parameters.
func DefaultConfig() *Config {
	c := &Config{Params: map[string]any{}, Prices: DefaultPrices(), SummaryPromptTokens: 500}
	for _, s := range Specs() {
		c.Params[s.ID] = s.Params()
	}
	return c
}

type configFile struct {
	Mode                string               `yaml:"mode"`
	Window              *int                 `yaml:"window"`
	Strategies          []string             `yaml:"strategies"`
	Params              map[string]yaml.Node `yaml:"params"`
	Prices              []Price              `yaml:"prices"`
	SummaryPromptTokens *int                 `yaml:"summary_prompt_tokens"`
}

// ParseConfig reads a strategies file over the defaults. Decoding is strict:
// an unknown key or strategy, or a value of the wrong type, is an error
// naming origin and the line.
func ParseConfig(data []byte, origin string) (*Config, error) {
	c := DefaultConfig()
	var f configFile
	if err := strictDecode(data, &f); err != nil {
		return nil, fmt.Errorf("%s: %w", origin, err)
	}
	if f.Mode != "" {
		m, ok := ParseMode(f.Mode)
		if !ok {
			return nil, fmt.Errorf("%s: mode: want replay or once, got %q", origin, f.Mode)
		}
		c.Mode = m
	}
	if f.Window != nil {
		c.Window = *f.Window
	}
	for _, id := range f.Strategies {
		if _, err := SpecByID(id); err != nil {
			return nil, fmt.Errorf("%s: strategies: %w", origin, err)
		}
	}
	c.Strategies = f.Strategies
	for id, node := range f.Params {
		p, ok := c.Params[id]
		if !ok {
			_, err := SpecByID(id)
			return nil, fmt.Errorf("%s: line %d: params: %w", origin, node.Line, err)
		}
		raw, err := yaml.Marshal(&node)
		if err != nil {
			return nil, fmt.Errorf("%s: params.%s: %w", origin, id, err)
		}
		if err := strictDecode(raw, p); err != nil {
			return nil, fmt.Errorf("%s: params.%s (from line %d): %w", origin, id, node.Line, err)
		}
	}
	if err := c.checkRulers(); err != nil {
		return nil, fmt.Errorf("%s: params.%w", origin, err)
	}
	for _, s := range Specs() {
		if err := checkRanges(s.ID, c.Params[s.ID]); err != nil {
			return nil, fmt.Errorf("%s: params.%w", origin, err)
		}
	}
	if c.Window < 0 {
		return nil, fmt.Errorf("%s: window: want a number of tokens, got %d", origin, c.Window)
	}
	if f.Prices != nil {
		c.Prices = append(f.Prices, DefaultPrices()...)
	}
	if f.SummaryPromptTokens != nil {
		c.SummaryPromptTokens = *f.SummaryPromptTokens
	}
	return c, nil
}

func strictDecode(data []byte, v any) error {
	d := yaml.NewDecoder(bytes.NewReader(data))
	d.KnownFields(true)
	if err := d.Decode(v); err != nil && !errors.Is(err, io.EOF) {
		return err
	}
	return nil
}

// Set changes one parameter: key is "strategy.param" (yaml names, e.g.
// "mask.keep", "window.keep_last") or a top-level "mode" / "window".
func (c *Config) Set(key, value string) error {
	switch key {
	case "mode":
		m, ok := ParseMode(value)
		if !ok {
			return fmt.Errorf("mode: want replay or once, got %q", value)
		}
		c.Mode = m
		return nil
	case "window":
		var w int
		if err := yaml.Unmarshal([]byte(value), &w); err != nil {
			return fmt.Errorf("window: %w", err)
		}
		if w < 0 {
			return fmt.Errorf("window: want a number of tokens (0: each model's own), got %d", w)
		}
		c.Window = w
		return nil
	}
	id, param, ok := strings.Cut(key, ".")
	if !ok {
		return fmt.Errorf("%s: want strategy.param (e.g. mask.keep)", key)
	}
	p, ok := c.Params[id]
	if !ok {
		_, err := SpecByID(id)
		return err
	}
	if !hasParam(p, param) {
		return fmt.Errorf("%s: strategy %s has no parameter %q (see compactbench strategies)", key, id, param)
	}
	v := reflect.ValueOf(p).Elem()
	was := reflect.ValueOf(v.Interface()) // a copy: a rejected value leaves the config as it was
	err := strictDecode([]byte(param+": "+value), p)
	if err == nil {
		err = c.checkRulers()
	}
	if err == nil {
		err = checkRanges(id, p)
	}
	if err != nil {
		v.Set(was)
		return fmt.Errorf("%s=%s: %w", key, value, err)
	}
	return nil
}

// checkRulers rejects a strategy parameter that names an unknown ruler
// ("metric" is the run's metric ruler).
func (c *Config) checkRulers() error {
	for _, s := range Specs() {
		p, ok := c.Params[s.ID]
		if !ok {
			continue
		}
		f := reflect.ValueOf(p).Elem().FieldByName("Ruler")
		if !f.IsValid() || f.Kind() != reflect.String || f.String() == "metric" {
			continue
		}
		if _, err := tokens.ByName(f.String()); err != nil {
			return fmt.Errorf("%s.ruler: %w", s.ID, err)
		}
	}
	return nil
}

// checkRanges rejects a numeric parameter out of its range: counts and
// sizes are at least 0, and fractions (a name ending in fraction, percent,
// threshold or discount) are within [0, 1].
func checkRanges(id string, p any) error {
	if p == nil {
		return nil
	}
	v := reflect.ValueOf(p).Elem()
	t := v.Type()
	for i := 0; i < t.NumField(); i++ {
		name, _, _ := strings.Cut(t.Field(i).Tag.Get("yaml"), ",")
		f := v.Field(i)
		var x float64
		switch f.Kind() {
		case reflect.Int, reflect.Int64, reflect.Int32:
			x = float64(f.Int())
		case reflect.Float64, reflect.Float32:
			x = f.Float()
		default:
			continue
		}
		fraction := false
		for _, suffix := range []string{"fraction", "percent", "threshold", "discount"} {
			fraction = fraction || strings.HasSuffix(name, suffix)
		}
		switch {
		case math.IsNaN(x) || math.IsInf(x, 0) || x < 0:
			return fmt.Errorf("%s.%s: want a number of at least 0, got %v", id, name, x)
		case fraction && x > 1:
			return fmt.Errorf("%s.%s: want a fraction from 0 to 1, got %v", id, name, x)
		}
	}
	return nil
}

func hasParam(p any, name string) bool {
	t := reflect.TypeOf(p).Elem()
	for i := 0; i < t.NumField(); i++ {
		if tag, _, _ := strings.Cut(t.Field(i).Tag.Get("yaml"), ","); tag == name {
			return true
		}
	}
	return false
}

// Enabled returns the strategies the config runs, in Specs order.
func (c *Config) Enabled() []Spec {
	if len(c.Strategies) == 0 {
		return Specs()
	}
	want := map[string]bool{}
	for _, id := range c.Strategies {
		want[id] = true
	}
	var out []Spec
	for _, s := range Specs() {
		if want[s.ID] {
			out = append(out, s)
		}
	}
	return out
}

// ParamsYAML renders a strategy's parameters as YAML.
func ParamsYAML(p any) string {
	out, err := yaml.Marshal(p)
	if err != nil {
		return err.Error()
	}
	return string(out)
}
