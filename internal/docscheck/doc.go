// Package docscheck has no code: its tests keep the documentation in docs/
// and the code's comments in step. A Go comment may cite docs/ (or state the
// fact itself), never a document that exists only outside the repository;
// every seed a comment names is described in docs/strategies.md; every
// relative link in README.md and docs/ resolves; every table column and
// every key summary.json can hold is defined in docs/metrics.md. One more
// test keeps the code's shape: no function of cmd/compactbench or
// internal/plan is over 60 lines.
package docscheck
