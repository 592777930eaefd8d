package main

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// TestGeneratedUpToDate: internal/aggregate/tunefigures.go is what the
// registry generates; after adding or changing a figure's tune column,
// run go generate ./internal/aggregate.
func TestGeneratedUpToDate(t *testing.T) {
	want, err := Source()
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(filepath.Join("..", output))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s is stale: run go generate ./internal/aggregate", output)
	}
}

func TestField(t *testing.T) {
	for in, want := range map[string]string{"median_compression": "MedianCompression", "f1": "F1", "cost_ratio": "CostRatio"} {
		if got := field(in); got != want {
			t.Errorf("field(%q) = %q, want %q", in, got, want)
		}
	}
}
