package main

import (
	"hash/fnv"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/compactbench/compactbench/internal/analysis"
	"github.com/compactbench/compactbench/internal/anchors"
	"github.com/compactbench/compactbench/internal/loader"
)

// shard is --shard K/N: the inputs whose hash falls in part K of N. The
// zero shard is every input.
type shard struct{ K, N int }

// parseShard reads "K/N" (1 ≤ K ≤ N); "" is no sharding.
func parseShard(s string) (shard, error) {
	if s == "" {
		return shard{}, nil
	}
	ks, ns, ok := strings.Cut(s, "/")
	k, kerr := strconv.Atoi(strings.TrimSpace(ks))
	n, nerr := strconv.Atoi(strings.TrimSpace(ns))
	if !ok || kerr != nil || nerr != nil || n < 1 || k < 1 || k > n {
		return shard{}, usageErr("--shard %s: want K/N with 1 ≤ K ≤ N, e.g. 2/4", s)
	}
	return shard{K: k, N: n}, nil
}

// ownsRunRows reports whether the shard writes the rows that belong to the
// run rather than to an input file (the problem rows of unusable label
// lines): an unsharded run and shard 1 do, so that the shards' own tables
// together hold every row of the unsharded run exactly once.
func (s shard) ownsRunRows() bool { return s.N < 1 || s.K == 1 }

// labelProblemRows are the problem rows of label lines that cannot be used
// (a fresh slice each call: writing rows stamps them).
func labelProblemRows(ps []anchors.LabelProblem) []analysis.ProblemRow {
	if len(ps) == 0 {
		return nil
	}
	rows := make([]analysis.ProblemRow, len(ps))
	for i, p := range ps {
		rows[i] = analysis.ProblemRow{Path: p.File, TranscriptID: "(labels)", Line: int64(p.Line), Reason: p.Reason}
	}
	return rows
}

// pick returns the indices of the files of the shard, in order (every
// index for the zero shard). A file's shard is an FNV-1a
// hash of its path relative to the argument it was found under (the
// longest argument that contains it; a file named as an argument counts by
// its base name), so the split is the same wherever the corpus is checked
// out and however the arguments are spelt.
func (s shard) pick(args []string, files []loader.File) []int {
	var out []int
	if s.N < 1 {
		for i := range files {
			out = append(out, i)
		}
		return out
	}
	roots := make([]string, len(args))
	for i, a := range args {
		roots[i] = filepath.ToSlash(filepath.Clean(a))
	}
	for i, f := range files {
		if shardOf(shardKey(roots, f.Path), s.N) == s.K {
			out = append(out, i)
		}
	}
	return out
}

// shardKey is the path a file is hashed by: relative to its argument.
func shardKey(roots []string, path string) string {
	best, bestLen := "", -1
	for _, r := range roots {
		if path == r {
			return filepath.Base(path)
		}
		rel, err := filepath.Rel(r, path)
		if err != nil || rel == ".." || strings.HasPrefix(rel, "../") {
			continue
		}
		if len(r) > bestLen {
			best, bestLen = filepath.ToSlash(rel), len(r)
		}
	}
	if bestLen < 0 {
		return path
	}
	return best
}

// shardOf is the shard (1…n) of a key.
func shardOf(key string, n int) int {
	h := fnv.New64a()
	h.Write([]byte(key))
	return int(h.Sum64()%uint64(n)) + 1
}
