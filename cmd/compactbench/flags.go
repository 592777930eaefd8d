package main

import (
	"os"

	"github.com/compactbench/compactbench/internal/compaction"
)

// loadCompactionConfig reads a strategies file (--config), or returns the
// defaults when path is empty.
func loadCompactionConfig(path string) (*compaction.Config, error) {
	if path == "" {
		return compaction.DefaultConfig(), nil
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, usageErr("--config: %v", err)
	}
	cfg, err := compaction.ParseConfig(data, path)
	if err != nil {
		return nil, usageErr("--config: %v", err)
	}
	return cfg, nil
}
