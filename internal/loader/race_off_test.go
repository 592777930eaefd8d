//go:build !race

package loader

// raceEnabled reports whether the race detector is on: it slows code by
// different factors, so timing comparisons are skipped under it.
const raceEnabled = false
