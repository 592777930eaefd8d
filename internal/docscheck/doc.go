// Package docscheck has no code: its tests keep the documentation in docs/
// and the code's comments in step. A Go comment may cite docs/ (or state the
// fact itself), never a document that exists only outside the repository;
// every seed a comment names is described in docs/strategies.md; and every
// relative link in README.md and docs/ resolves.
package docscheck
