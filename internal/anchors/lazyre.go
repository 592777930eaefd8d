package anchors

import (
	"regexp"
	"sync"
)

// lazyRegexp is a regular expression compiled when first used, not at
// process start (compiling this package's expressions took about 2 ms of
// every start, --help included). It has the methods of *regexp.Regexp the
// package uses.
type lazyRegexp struct {
	expr string
	re   func() *regexp.Regexp
}

// lazyRE returns expr to be compiled on first use; a bad expression panics
// then, as regexp.MustCompile would at start (the tests use each one).
func lazyRE(expr string) *lazyRegexp {
	return &lazyRegexp{expr: expr, re: sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(expr) })}
}

// String is the source text.
func (l *lazyRegexp) String() string { return l.expr }

// MatchString is regexp.Regexp.MatchString.
func (l *lazyRegexp) MatchString(s string) bool { return l.re().MatchString(s) }

// FindString is regexp.Regexp.FindString.
func (l *lazyRegexp) FindString(s string) string { return l.re().FindString(s) }

// FindStringSubmatch is regexp.Regexp.FindStringSubmatch.
func (l *lazyRegexp) FindStringSubmatch(s string) []string { return l.re().FindStringSubmatch(s) }

// FindAllStringSubmatch is regexp.Regexp.FindAllStringSubmatch.
func (l *lazyRegexp) FindAllStringSubmatch(s string, n int) [][]string {
	return l.re().FindAllStringSubmatch(s, n)
}

// FindAllStringSubmatchIndex is regexp.Regexp.FindAllStringSubmatchIndex.
func (l *lazyRegexp) FindAllStringSubmatchIndex(s string, n int) [][]int {
	return l.re().FindAllStringSubmatchIndex(s, n)
}
