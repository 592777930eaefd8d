package docscheck

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strings"
	"testing"
)

// maxFuncLines is the longest function (declaration to closing brace)
// the command line and the plan may hold: longer ones are split into named
// steps.
const maxFuncLines = 60

// shortFuncDirs are the packages whose functions are kept short.
var shortFuncDirs = []string{"cmd/compactbench", "internal/plan"}

// TestFunctionsAreShort fails on a function of cmd/compactbench or
// internal/plan (tests left out) longer than maxFuncLines lines, counted
// on the syntax tree; function literals count within their function.
func TestFunctionsAreShort(t *testing.T) {
	fset := token.NewFileSet()
	checked := 0
	for _, dir := range shortFuncDirs {
		files, err := filepath.Glob(filepath.Join(root, dir, "*.go"))
		if err != nil || len(files) == 0 {
			t.Fatalf("%s: no Go files (%v)", dir, err)
		}
		for _, path := range files {
			if strings.HasSuffix(path, "_test.go") {
				continue
			}
			f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
			if err != nil {
				t.Fatalf("parse %s: %v", path, err)
			}
			for _, d := range f.Decls {
				fn, ok := d.(*ast.FuncDecl)
				if !ok || fn.Body == nil {
					continue
				}
				checked++
				start, end := fset.Position(fn.Pos()), fset.Position(fn.End())
				if n := end.Line - start.Line + 1; n > maxFuncLines {
					t.Errorf("%s:%d: %s is %d lines (at most %d): split it into named steps",
						filepath.ToSlash(filepath.Join(dir, filepath.Base(path))), start.Line, fn.Name.Name, n, maxFuncLines)
				}
			}
		}
	}
	if checked < 50 {
		t.Fatalf("only %d functions checked: are the directories right?", checked)
	}
}
