package gen

import (
	"math/rand/v2"
	"strconv"
	"strings"
)

// language is how a project in one programming language looks: file layout,
// identifier style, code, and the tools that build and test it.
type language struct {
	name     string
	ext      string
	srcPath  string // template with {mod}
	testPath string
	snake    bool   // snake_case identifiers (else camelCase)
	indent   string // one level of indentation
	header   []string
	fnOpen   string // {fn} {a} {b} {T}
	fnClose  string
	stmts    []string // {a} {b} {v} {f} {f2} {n} {s} {fn}
	testOpen string   // {test} {fn}
	asserts  []string // {fn} {n} {s} {v}
	runners  []*runner
	build    []buildTool
	install  []installTool
	manifest string // dependency file
	types    []string
	crash    []string // runtime error lines: {fn} {f} {n}
}

// testCase is one test of a project.
type testCase struct {
	name string // as the runner prints it
	file string // relative path of the test file
	fn   string // the function it tests
}

var languages = []*language{python, golang, typescript, rust, clang}

var python = &language{
	name: "python", ext: ".py", srcPath: "src/{pkg}/{mod}.py", testPath: "tests/test_{mod}.py", snake: true, indent: "    ",
	header:  []string{"from __future__ import annotations", "", "import logging", "from dataclasses import dataclass", "from decimal import Decimal", "", "log = logging.getLogger(__name__)", ""},
	fnOpen:  "def {fn}({a}, {b}=None):\n    \"\"\"{Doc}\"\"\"",
	fnClose: "",
	stmts: []string{
		"if {a} is None:\n        raise ValueError(\"{a} is required\")",
		"{v} = [x for x in {a} if x.{f} is not None]",
		"{v} = {b} or {n}",
		"for item in {a}:\n        if item.{f} > {n}:\n            {v}.append(item.{f2})",
		"log.debug(\"{s}: %s\", {a})",
		"{v} = Decimal({a}.{f}).quantize(Decimal(\"0.01\"))",
		"{v} = {fn}({a}.{f}, {b})",
		"if not {v}:\n        return None",
		"{v} = sorted({a}, key=lambda x: x.{f})",
		"{v} = dict((k, v) for k, v in {a}.items() if k != \"{f}\")",
	},
	testOpen: "def {test}():",
	asserts: []string{"assert {fn}({v}) == {n}", "assert {fn}([]) == []", "with pytest.raises(ValueError):\n        {fn}(None)",
		"assert result.{f} == \"{s}\"", "assert len(result) == {n}"},
	manifest: "requirements.txt",
	types:    []string{"Invoice", "LineItem", "Config", "Token", "Record"},
	crash: []string{"TypeError: unsupported operand type(s) for +: 'NoneType' and 'int'", "KeyError: '{f}'",
		"AttributeError: 'NoneType' object has no attribute '{f}'", "ZeroDivisionError: division by zero",
		"decimal.InvalidOperation: [<class 'decimal.ConversionSyntax'>]"},
}

var golang = &language{
	name: "go", ext: ".go", srcPath: "internal/{mod}/{mod}.go", testPath: "internal/{mod}/{mod}_test.go", indent: "\t",
	header:  []string{"package {mod}", "", "import (", "\t\"errors\"", "\t\"fmt\"", "\t\"sort\"", ")", ""},
	fnOpen:  "// {Fn} {doc}\nfunc {Fn}({a} []{T}, {b} int) ([]{T}, error) {",
	fnClose: "}",
	stmts: []string{
		"if {a} == nil {\n\t\treturn nil, errors.New(\"{s}: nil {a}\")\n\t}",
		"{v} := make([]{T}, 0, len({a}))",
		"for _, x := range {a} {\n\t\tif x.{F} > {b} {\n\t\t\t{v} = append({v}, x)\n\t\t}\n\t}",
		"sort.Slice({v}, func(i, j int) bool { return {v}[i].{F} < {v}[j].{F} })",
		"if len({v}) > {n} {\n\t\t{v} = {v}[:{n}]\n\t}",
		"if err := validate{F}({a}); err != nil {\n\t\treturn nil, fmt.Errorf(\"{s}: %w\", err)\n\t}",
		"{v}, err := {fn}({a}, {b})\n\tif err != nil {\n\t\treturn nil, err\n\t}",
	},
	testOpen: "func {Test}(t *testing.T) {",
	asserts: []string{"if got := {Fn}({v}); got != {n} {\n\t\tt.Errorf(\"{Fn}() = %v, want {n}\", got)\n\t}",
		"if _, err := {Fn}(nil, 0); err == nil {\n\t\tt.Fatal(\"want an error for nil input\")\n\t}",
		"got, _ := {Fn}(fixture{F}(), {n})\n\tif len(got) != {n} {\n\t\tt.Fatalf(\"len = %d, want {n}\", len(got))\n\t}"},
	manifest: "go.mod",
	types:    []string{"Invoice", "Item", "Entry", "Token", "Record"},
	crash: []string{"panic: runtime error: index out of range [{n}] with length {n}",
		"panic: runtime error: invalid memory address or nil pointer dereference", "panic: assignment to entry in nil map"},
}

var typescript = &language{
	name: "typescript", ext: ".ts", srcPath: "src/{mod}/{mod}.ts", testPath: "src/{mod}/{mod}.test.ts", indent: "  ",
	header:  []string{"import { z } from \"zod\";", "import type { {T} } from \"../types\";", "import { logger } from \"../logger\";", ""},
	fnOpen:  "/** {Doc} */\nexport function {fn}({a}: {T}[], {b}?: number): {T}[] {",
	fnClose: "}",
	stmts: []string{
		"if (!{a}) {\n    throw new Error(\"{a} is required\");\n  }",
		"const {v} = {a}.filter((x) => x.{f} !== undefined);",
		"const {v} = {b} ?? {n};",
		"for (const item of {a}) {\n    if (item.{f} > {n}) {\n      {v}.push(item);\n    }\n  }",
		"logger.debug(\"{s}\", { count: {a}.length });",
		"const {v} = [...{a}].sort((x, y) => x.{f} - y.{f});",
		"const {v} = {fn}({a}, {b});",
		"if ({v}.length === 0) {\n    return [];\n  }",
	},
	testOpen: "  it(\"{testDesc}\", () => {",
	asserts: []string{"expect({fn}({v})).toEqual({n});", "expect(() => {fn}(undefined as never)).toThrow();",
		"expect(result.{f}).toBe(\"{s}\");", "expect(result).toHaveLength({n});"},
	manifest: "package.json",
	types:    []string{"Invoice", "LineItem", "Config", "Session", "Order"},
	crash: []string{"TypeError: Cannot read properties of undefined (reading '{f}')", "RangeError: Maximum call stack size exceeded",
		"TypeError: {fn} is not a function"},
}

var rust = &language{
	name: "rust", ext: ".rs", srcPath: "src/{mod}.rs", testPath: "tests/{mod}.rs", snake: true, indent: "    ",
	header:  []string{"use std::collections::HashMap;", "", "use crate::error::Error;", "use crate::types::{T};", ""},
	fnOpen:  "/// {Doc}\npub fn {fn}({a}: &[{T}], {b}: usize) -> Result<Vec<{T}>, Error> {",
	fnClose: "}",
	stmts: []string{
		"if {a}.is_empty() {\n        return Err(Error::Empty(\"{s}\"));\n    }",
		"let mut {v}: Vec<{T}> = Vec::with_capacity({a}.len());",
		"for x in {a} {\n        if x.{f} > {b} {\n            {v}.push(x.clone());\n        }\n    }",
		"{v}.sort_by_key(|x| x.{f});",
		"{v}.truncate({n});",
		"let {v} = {fn}({a}, {b})?;",
		"let mut seen: HashMap<u64, usize> = HashMap::new();",
	},
	testOpen: "#[test]\nfn {test}() {",
	asserts:  []string{"assert_eq!({fn}(&{v}, {n}).unwrap().len(), {n});", "assert!({fn}(&[], 0).is_err());", "assert_eq!(result.{f}, \"{s}\");"},
	manifest: "Cargo.toml",
	types:    []string{"Invoice", "Item", "Entry", "Token", "Record"},
	crash:    []string{"thread 'main' panicked at src/{mod}.rs:{n}:9:\ncalled `Option::unwrap()` on a `None` value", "thread 'main' panicked at src/{mod}.rs:{n}:5:\nindex out of bounds: the len is {n} but the index is {n}"},
}

var clang = &language{
	name: "c", ext: ".c", srcPath: "src/{mod}.c", testPath: "tests/test_{mod}.c", snake: true, indent: "    ",
	header:  []string{"#include <stdlib.h>", "#include <string.h>", "", "#include \"{mod}.h\"", ""},
	fnOpen:  "/* {Doc} */\nint {fn}(struct {t} *{a}, size_t {b})\n{",
	fnClose: "}",
	stmts: []string{
		"if ({a} == NULL)\n        return -1;",
		"size_t {v} = 0;",
		"for (size_t i = 0; i < {b}; i++) {\n        if ({a}[i].{f} > {n})\n            {v}++;\n    }",
		"memset({a}, 0, sizeof(*{a}) * {b});",
		"if ({v} > {n})\n        {v} = {n};",
		"int rc = {fn}({a}, {b});\n    if (rc != 0)\n        return rc;",
	},
	testOpen: "static void {test}(void)\n{",
	asserts:  []string{"ASSERT_EQ({fn}(&{v}, {n}), 0);", "ASSERT_EQ({fn}(NULL, 0), -1);", "ASSERT_TRUE({v}.{f} == {n});"},
	manifest: "Makefile",
	types:    []string{"invoice", "item", "entry", "token", "record"},
	crash:    []string{"Segmentation fault (core dumped)", "free(): double free detected in tcache 2\nAborted (core dumped)"},
}

// ident makes an identifier in the language's style from words.
func (l *language) ident(words ...string) string {
	if l.snake {
		return strings.Join(words, "_")
	}
	var b strings.Builder
	for i, w := range words {
		if i == 0 {
			b.WriteString(w)
		} else {
			b.WriteString(capitalize(w))
		}
	}
	return b.String()
}

// exported is an identifier as other packages call it (Go upper-cases it).
func (l *language) exported(fn string) string {
	if l == golang {
		return capitalize(fn)
	}
	return fn
}

// testName is how the language names the test of fn for a condition word.
func (l *language) testName(fn, what string) string {
	switch l {
	case golang:
		name := "Test" + capitalize(fn)
		for _, w := range strings.Split(what, "_") {
			name += capitalize(w)
		}
		return name
	case typescript:
		return fn + " " + strings.ReplaceAll(what, "_", " ")
	}
	return "test_" + fn + "_" + what
}

// plural makes the plural of an English noun of the vocabulary.
func plural(n string) string {
	switch {
	case strings.HasSuffix(n, "y"):
		return n[:len(n)-1] + "ies"
	case strings.HasSuffix(n, "s"), strings.HasSuffix(n, "h"):
		return n + "es"
	}
	return n + "s"
}

// comment is a line comment in the language.
func (l *language) comment(text string) string {
	switch l {
	case python:
		return "# " + text
	case clang:
		return "/* " + text + " */"
	}
	return "// " + text
}

// testWhat are the situations tests are named after.
var testWhat = []string{"empty_input", "rounding", "large_batch", "missing_field", "unicode", "negative_amount",
	"duplicate_keys", "expired", "defaults", "limit", "sorted_output", "passes_through_zero", "concurrent_calls"}

// code returns the source text of a file holding fns.
func (l *language) code(r *rand.Rand, p *project, mod string, fns []string) string {
	T := pick(r, l.types)
	var b strings.Builder
	for _, h := range l.header {
		fillTo(&b, h, "mod", mod, "T", T, "pkg", p.pkg)
		b.WriteByte('\n')
	}
	// The named functions, plus helpers, so files have realistic lengths.
	all := append([]string{}, fns...)
	for i, n := 0, between(r, 2, 22); i < n; i++ {
		all = append(all, l.ident(pick(r, verbs), pick(r, nouns), pick(r, nouns)))
	}
	r.Shuffle(len(all), func(i, j int) { all[i], all[j] = all[j], all[i] })
	for _, fn := range all {
		a, bb := plural(pick(r, nouns)), "limit"
		if !l.snake {
			bb = "max" + capitalize(pick(r, nouns))
		}
		doc := fill(pick(r, docLines), "noun", pick(r, nouns), "field", pick(r, fields))
		fillTo(&b, l.fnOpen, "fn", fn, "Fn", l.exported(fn), "a", a, "b", bb, "T", T, "t", T, "Doc", capitalize(doc), "doc", doc)
		b.WriteByte('\n')
		n := between(r, 3, 9)
		v := "out"
		for i := 0; i < n; i++ {
			f := pick(r, fields)
			b.WriteString(l.indent)
			fillTo(&b, pick(r, l.stmts), "a", a, "b", bb, "v", v, "f", f, "F", capitalize(strings.ReplaceAll(f, "_", "")),
				"f2", pick(r, fields), "n", itoa(between(r, 1, 100)), "s", mod+"."+fn, "fn", l.ident(pick(r, verbs), pick(r, nouns)), "T", T)
			b.WriteByte('\n')
		}
		switch l {
		case python:
			b.WriteString("    return " + v + "\n\n\n")
		case golang:
			b.WriteString("\treturn " + v + ", nil\n}\n\n")
		case typescript:
			b.WriteString("  return " + v + ";\n}\n\n")
		case rust:
			b.WriteString("    Ok(" + v + ")\n}\n\n")
		default:
			b.WriteString("    return (int)" + v + ";\n}\n\n")
		}
	}
	return b.String()
}

var docLines = []string{"returns the {noun} for each entry, skipping ones without a {field}.",
	"normalises the {field} of every record in place.", "groups entries by {field} and sums the {noun}.",
	"applies the configured {noun} limit.", "validates the {field} before anything is written."}

// testCode returns the text of a test file with tests.
func (l *language) testCode(r *rand.Rand, p *project, mod string, tests []testCase) string {
	var b strings.Builder
	switch l {
	case python:
		b.WriteString("import pytest\n\nfrom " + p.pkg + "." + mod + " import *\n\n\n")
	case golang:
		b.WriteString("package " + mod + "\n\nimport \"testing\"\n\n")
	case typescript:
		b.WriteString("import { describe, expect, it } from \"vitest\";\nimport * as m from \"./" + mod + "\";\n\ndescribe(\"" + mod + "\", () => {\n")
	case rust:
		b.WriteString("use " + strings.ReplaceAll(p.name, "-", "_") + "::" + mod + "::*;\n\n")
	default:
		b.WriteString("#include \"test.h\"\n#include \"../src/" + mod + ".h\"\n\n")
	}
	for _, tc := range tests {
		fillTo(&b, l.testOpen, "test", tc.name, "Test", tc.name, "testDesc", tc.name)
		b.WriteByte('\n')
		for i, n := 0, between(r, 1, 4); i < n; i++ {
			b.WriteString(l.indent)
			if l == typescript {
				b.WriteString(l.indent)
			}
			fillTo(&b, pick(r, l.asserts), "fn", tc.fn, "Fn", l.exported(tc.fn), "v", "fixture", "n", itoa(between(r, 0, 12)),
				"f", pick(r, fields), "F", capitalize(pick(r, nouns)), "s", pick(r, nouns))
			b.WriteByte('\n')
		}
		switch l {
		case typescript:
			b.WriteString("  });\n\n")
		case python:
			b.WriteString("\n\n")
		default:
			b.WriteString("}\n\n")
		}
	}
	if l == typescript {
		b.WriteString("});\n")
	}
	return b.String()
}

// numbered renders file content the way Claude Code's Read tool returns it:
// a right-aligned line number, an arrow, the line.
func numbered(content string) string {
	const width = 6 // of the line number
	var b strings.Builder
	// Each line gains its number, the 3-byte arrow and a newline.
	b.Grow(len(content) + (strings.Count(content, "\n")+1)*(width+len("→")+1))
	var num [20]byte
	for n := int64(1); len(content) > 0; n++ {
		line, rest, _ := strings.Cut(content, "\n")
		content = rest
		d := strconv.AppendInt(num[:0], n, 10)
		for k := len(d); k < width; k++ {
			b.WriteByte(' ')
		}
		b.Write(d)
		b.WriteString("→")
		b.WriteString(line)
		b.WriteByte('\n')
	}
	return b.String()
}
