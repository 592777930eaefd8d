package plan

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/compactbench/compactbench/internal/analysis"
	"github.com/compactbench/compactbench/internal/report"
)

// ConfigHash identifies an analysis configuration in summary.json: the
// first 8 bytes of the SHA-256 of its canonical JSON.
func ConfigHash(cfg *analysis.Config) string {
	data, _ := json.Marshal(cfg)
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:8])
}

// RunID identifies a run by what determines its outputs: tool, version,
// configuration and inputs (no clock, so identical runs share it).
func RunID(m *report.Meta) string {
	h := sha256.New()
	fmt.Fprintf(h, "%s\x00%s\x00%s\x00%s", m.Tool, m.Version, m.ConfigHash, strings.Join(m.Inputs, "\x00"))
	return hex.EncodeToString(h.Sum(nil)[:8])
}
