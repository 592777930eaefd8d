package gen

import (
	"math/rand/v2"
	"strings"
)

// runner is a test runner: its command lines and what it prints. Outputs
// follow the real tools' formats, so a rule looking for "pass" finds it in
// some (pytest, jest, cargo) and not in others (go test prints "ok", Unity
// prints "OK", ctest "100% tests passed" only in its summary).
type runner struct {
	name string
	cmds []string // {target}: a test file or package
	// run prints a run of tests: every test passes when bad is nil, else
	// bad fails with msg. It returns the exit code.
	run func(r *rand.Rand, p *project, tests []testCase, bad *testCase, msg string) (string, int)
}

// testRun is the outcome of one test command.
type testRun struct {
	cmd  string
	out  string
	exit int
}

func secs(r *rand.Rand, lo, hi int) string {
	ms := between(r, lo, hi)
	return itoa(ms/1000) + "." + pad3(ms%1000)
}

func pad3(n int) string {
	s := itoa(n)
	for len(s) < 3 {
		s = "0" + s
	}
	return s
}

// byFile groups tests by file, files in first-seen order.
func byFile(tests []testCase) (files []string, counts map[string]int) {
	counts = map[string]int{}
	for _, t := range tests {
		if counts[t.file] == 0 {
			files = append(files, t.file)
		}
		counts[t.file]++
	}
	return files, counts
}

var pytest = &runner{
	name: "pytest",
	cmds: []string{"pytest", "pytest -q", "python -m pytest {target} -x", "uv run pytest", "pytest -v {target}"},
	run: func(r *rand.Rand, p *project, tests []testCase, bad *testCase, msg string) (string, int) {
		var b strings.Builder
		b.WriteString(banner("test session starts") + "\n")
		b.WriteString("platform linux -- Python 3.12." + itoa(between(r, 1, 8)) + ", pytest-8.3." + itoa(between(r, 1, 4)) + ", pluggy-1.5.0\n")
		b.WriteString("rootdir: " + p.root + "\nconfigfile: pyproject.toml\nplugins: cov-5.0.0, asyncio-0.23.8\ncollected " + itoa(len(tests)) + " items\n\n")
		files, counts := byFile(tests)
		done := 0
		for _, f := range files {
			done += counts[f]
			dots := strings.Repeat(".", counts[f])
			if bad != nil && f == bad.file {
				dots = dots[:len(dots)-1] + "F"
			}
			b.WriteString(f + " " + dots + strings.Repeat(" ", max(1, 60-len(f)-counts[f])) + "[" + pctStr(done, len(tests)) + "]\n")
		}
		if bad == nil {
			b.WriteString("\n" + banner(itoa(len(tests))+" passed in "+secs(r, 200, 9000)+"s") + "\n")
			return b.String(), 0
		}
		line := itoa(between(r, 12, 240))
		b.WriteString("\n" + banner("FAILURES") + "\n" + strings.Repeat("_", 20) + " " + bad.name + " " + strings.Repeat("_", 20) + "\n\n")
		b.WriteString("    def " + bad.name + "():\n        fixture = make_fixture()\n>       assert " + bad.fn + "(fixture) == expected\nE       " + msg + "\n\n")
		b.WriteString(bad.file + ":" + line + ": AssertionError\n" + banner("short test summary info") + "\n")
		b.WriteString("FAILED " + bad.file + "::" + bad.name + " - " + msg + "\n")
		b.WriteString(banner("1 failed, "+itoa(len(tests)-1)+" passed in "+secs(r, 200, 9000)+"s") + "\n")
		return b.String(), 1
	},
}

// banner centres text in a line of '=' the way pytest does.
func banner(text string) string {
	text = " " + text + " "
	side := max(3, (80-len(text))/2)
	return strings.Repeat("=", side) + text + strings.Repeat("=", max(3, 80-side-len(text)))
}

func pctStr(done, total int) string {
	p := itoa(done * 100 / max(1, total))
	for len(p) < 3 {
		p = " " + p
	}
	return p + "%"
}

var goTest = &runner{
	name: "go test",
	cmds: []string{"go test ./...", "go test -race ./...", "go test ./{target}/ -run {test} -v", "make test"},
	run: func(r *rand.Rand, p *project, tests []testCase, bad *testCase, msg string) (string, int) {
		var b strings.Builder
		for _, mod := range p.mods {
			switch {
			case bad == nil && chance(r, 0.15):
				b.WriteString("?   \t" + p.module + "/internal/" + mod + "\t[no test files]\n")
			case bad == nil || mod != modOf(bad.file):
				b.WriteString("ok  \t" + p.module + "/internal/" + mod + "\t" + secs(r, 3, 900) + "s\n")
			default:
				b.WriteString("--- FAIL: " + bad.name + " (0.00s)\n    " + baseName(bad.file) + ":" + itoa(between(r, 12, 300)) + ": " + msg + "\n")
				b.WriteString("FAIL\nFAIL\t" + p.module + "/internal/" + mod + "\t" + secs(r, 3, 900) + "s\n")
			}
		}
		if bad == nil {
			return b.String(), 0
		}
		b.WriteString("FAIL\n")
		return b.String(), 1
	},
}

var jest = &runner{
	name: "jest",
	cmds: []string{"npx jest", "npm test", "npm test -- {target}", "npx jest --ci"},
	run: func(r *rand.Rand, p *project, tests []testCase, bad *testCase, msg string) (string, int) {
		var b strings.Builder
		files, _ := byFile(tests)
		line := 0
		if bad != nil {
			line = between(r, 10, 200)
		}
		for _, f := range files {
			if bad == nil || f != bad.file {
				b.WriteString(" PASS  " + f)
				if bad == nil && chance(r, 0.3) {
					b.WriteString(" (" + secs(r, 1000, 6000) + " s)")
				}
				b.WriteByte('\n')
				continue
			}
			b.WriteString(" FAIL  " + f + "\n  ● " + modOf(f) + " › " + bad.name + "\n\n    " + msg + "\n\n")
			b.WriteString("      " + itoa(line) + " |   it(\"" + bad.name + "\", () => {\n    > " + itoa(line+1) + " |     expect(" + bad.fn + "(fixture)).toEqual(expected);\n         |                                ^\n\n")
			b.WriteString("      at Object.<anonymous> (" + f + ":" + itoa(line+1) + ":32)\n\n")
		}
		code := 0
		if bad == nil {
			b.WriteString("\nTest Suites: " + itoa(len(files)) + " passed, " + itoa(len(files)) + " total\nTests:       " + itoa(len(tests)) + " passed, " + itoa(len(tests)) + " total\n")
		} else {
			b.WriteString("Test Suites: 1 failed, " + itoa(len(files)-1) + " passed, " + itoa(len(files)) + " total\nTests:       1 failed, " + itoa(len(tests)-1) + " passed, " + itoa(len(tests)) + " total\n")
			code = 1
		}
		b.WriteString("Snapshots:   0 total\nTime:        " + secs(r, 900, 9000) + " s\nRan all test suites.\n")
		return b.String(), code
	},
}

var vitest = &runner{
	name: "vitest",
	cmds: []string{"npx vitest run", "pnpm test", "pnpm vitest run {target}"},
	run: func(r *rand.Rand, p *project, tests []testCase, bad *testCase, msg string) (string, int) {
		var b strings.Builder
		files, counts := byFile(tests)
		b.WriteString("\n RUN  v2.0.5 " + p.root + "\n\n")
		for _, f := range files {
			if bad != nil && f == bad.file {
				b.WriteString(" ❯ " + f + " (" + itoa(counts[f]) + " tests | 1 failed) " + itoa(between(r, 2, 90)) + "ms\n   × " + bad.name + "\n     → " + msg + "\n")
				continue
			}
			b.WriteString(" ✓ " + f + " (" + itoa(counts[f]) + " tests) " + itoa(between(r, 2, 90)) + "ms\n")
		}
		if bad == nil {
			b.WriteString("\n Test Files  " + itoa(len(files)) + " passed (" + itoa(len(files)) + ")\n      Tests  " + itoa(len(tests)) + " passed (" + itoa(len(tests)) + ")\n")
			b.WriteString("   Duration  " + secs(r, 400, 4000) + "s\n")
			return b.String(), 0
		}
		b.WriteString("\n⎯⎯⎯⎯⎯⎯⎯ Failed Tests 1 ⎯⎯⎯⎯⎯⎯⎯\n\n FAIL  " + bad.file + " > " + modOf(bad.file) + " > " + bad.name + "\nAssertionError: " + msg + "\n\n")
		b.WriteString(" Test Files  1 failed | " + itoa(len(files)-1) + " passed (" + itoa(len(files)) + ")\n      Tests  1 failed | " + itoa(len(tests)-1) + " passed (" + itoa(len(tests)) + ")\n")
		return b.String(), 1
	},
}

var cargoTest = &runner{
	name: "cargo test",
	cmds: []string{"cargo test", "cargo test --test {target}", "cargo test -- --nocapture"},
	run: func(r *rand.Rand, p *project, tests []testCase, bad *testCase, msg string) (string, int) {
		var b strings.Builder
		b.WriteString("   Compiling " + p.name + " v0.4.2 (" + p.root + ")\n")
		b.WriteString("    Finished `test` profile [unoptimized + debuginfo] target(s) in " + secs(r, 800, 30000) + "s\n")
		b.WriteString("     Running unittests src/lib.rs (target/debug/deps/" + strings.ReplaceAll(p.name, "-", "_") + "-" + cut(r, hexPool(), 16) + ")\n\n")
		b.WriteString("running " + itoa(len(tests)) + " tests\n")
		for _, t := range tests {
			if bad != nil && t == *bad {
				b.WriteString("test " + t.name + " ... FAILED\n")
			} else {
				b.WriteString("test " + t.name + " ... ok\n")
			}
		}
		if bad == nil {
			b.WriteString("\ntest result: ok. " + itoa(len(tests)) + " passed; 0 failed; 0 ignored; 0 measured; 0 filtered out; finished in " + secs(r, 5, 900) + "s\n")
			return b.String(), 0
		}
		b.WriteString("\nfailures:\n\n---- " + bad.name + " stdout ----\n\nthread '" + bad.name + "' panicked at " + bad.file + ":" + itoa(between(r, 10, 200)) + ":5:\n" + msg + "\n")
		b.WriteString("note: run with `RUST_BACKTRACE=1` environment variable to display a backtrace\n\n\nfailures:\n    " + bad.name + "\n\n")
		b.WriteString("test result: FAILED. " + itoa(len(tests)-1) + " passed; 1 failed; 0 ignored; 0 measured; 0 filtered out; finished in " + secs(r, 5, 900) + "s\n\nerror: test failed, to rerun pass `--test " + modOf(bad.file) + "`\n")
		return b.String(), 101
	},
}

var unityMake = &runner{
	name: "make test",
	cmds: []string{"make test", "make check", "make -j4 test"},
	run: func(r *rand.Rand, p *project, tests []testCase, bad *testCase, msg string) (string, int) {
		var b strings.Builder
		for _, mod := range p.mods {
			b.WriteString("cc -std=c11 -Wall -Wextra -O2 -Iinclude -c src/" + mod + ".c -o build/" + mod + ".o\n")
		}
		b.WriteString("cc -o build/test_runner build/*.o tests/*.c vendor/unity/unity.c\n")
		b.WriteString("./build/test_runner\n")
		for _, t := range tests {
			if bad != nil && t == *bad {
				b.WriteString(t.file + ":" + itoa(between(r, 10, 300)) + ":" + t.name + ":FAIL: " + msg + "\n")
			} else {
				b.WriteString(t.file + ":" + itoa(between(r, 10, 300)) + ":" + t.name + ":PASS\n")
			}
		}
		if bad == nil {
			b.WriteString("\n-----------------------\n" + itoa(len(tests)) + " Tests 0 Failures 0 Ignored \nOK\n")
			return b.String(), 0
		}
		b.WriteString("\n-----------------------\n" + itoa(len(tests)) + " Tests 1 Failures 0 Ignored \nFAIL\nmake: *** [Makefile:" + itoa(between(r, 20, 60)) + ": test] Error 1\n")
		return b.String(), 2
	},
}

var ctest = &runner{
	name: "ctest",
	cmds: []string{"ctest --test-dir build", "cmake --build build && ctest --test-dir build --output-on-failure"},
	run: func(r *rand.Rand, p *project, tests []testCase, bad *testCase, msg string) (string, int) {
		var b strings.Builder
		files, _ := byFile(tests)
		b.WriteString("Test project " + p.root + "/build\n")
		badIdx := 0
		for i, f := range files {
			name := modOf(f) + "_tests"
			failed := bad != nil && f == bad.file
			status := "   Passed"
			if failed {
				status, badIdx = "***Failed", i+1
			}
			b.WriteString("    Start " + itoa(i+1) + ": " + name + "\n" + itoa(i+1) + "/" + itoa(len(files)) + " Test #" + itoa(i+1) + ": " + name + " " + strings.Repeat(".", max(3, 30-len(name))) + status + "    0.0" + itoa(between(r, 1, 9)) + " sec\n")
			if failed {
				b.WriteString(bad.file + ":" + itoa(between(r, 10, 300)) + ": " + bad.name + ": " + msg + "\n")
			}
		}
		if bad == nil {
			b.WriteString("\n100% tests passed, 0 tests failed out of " + itoa(len(files)) + "\n\nTotal Test time (real) =   0." + pad3(between(r, 10, 900)) + " sec\n")
			return b.String(), 0
		}
		pct := (len(files) - 1) * 100 / max(1, len(files))
		b.WriteString("\n" + itoa(pct) + "% tests passed, 1 tests failed out of " + itoa(len(files)) + "\n\nThe following tests FAILED:\n\t  " + itoa(badIdx) + " - " + modOf(bad.file) + "_tests (Failed)\nErrors while running CTest\n")
		return b.String(), 8
	},
}

// modOf is the module a source or test path belongs to.
func modOf(path string) string {
	base := baseName(path)
	if i := strings.IndexByte(base, '.'); i >= 0 {
		base = base[:i]
	}
	base = strings.TrimPrefix(base, "test_")
	return strings.TrimSuffix(base, "_test")
}

func baseName(path string) string {
	if i := strings.LastIndexByte(path, '/'); i >= 0 {
		return path[i+1:]
	}
	return path
}

// failMsg is an assertion message in the language's style.
func failMsg(r *rand.Rand, l *language, fn string) string {
	a, b := between(r, 0, 400), between(r, 0, 400)
	if a == b {
		b++
	}
	x, y := itoa(a), itoa(b)
	switch l {
	case python:
		return pick(r, []string{"AssertionError: assert " + x + " == " + y, "assert Decimal('" + x + ".67') == Decimal('" + x + ".68')",
			"AssertionError: assert [] == ['" + pick(r, nouns) + "']", pick(r, l.crash)})
	case golang:
		return pick(r, []string{capitalize(fn) + "() = " + x + ", want " + y, "got " + x + " items, want " + y,
			capitalize(fn) + ": unexpected error: " + pick(r, nouns) + " not found"})
	case typescript:
		return pick(r, []string{"expect(received).toEqual(expected) // deep equality\n\n    Expected: " + y + "\n    Received: " + x,
			"expected " + x + " to be " + y + " // Object.is equality", "TypeError: Cannot read properties of undefined (reading '" + pick(r, fields) + "')"})
	case rust:
		return "assertion `left == right` failed\n  left: " + x + "\n right: " + y
	}
	return "Expected " + y + " Was " + x
}

// buildTool is a command that compiles or checks the project.
type buildTool struct {
	cmd string
	ok  func(r *rand.Rand, p *project) string
	// fail prints a compile error at path:line about ident.
	fail func(r *rand.Rand, p *project, path string, line int, ident string) string
	exit int
}

// installTool fetches a project's dependencies.
type installTool struct {
	cmd  string
	ok   func(r *rand.Rand, p *project) string
	fail func(r *rand.Rand, p *project, dep, badVer string) string
	exit int
}

func silent(*rand.Rand, *project) string { return "" }

func init() {
	python.runners = []*runner{pytest}
	golang.runners = []*runner{goTest}
	typescript.runners = []*runner{jest, vitest}
	rust.runners = []*runner{cargoTest}
	clang.runners = []*runner{unityMake, ctest}

	python.build = []buildTool{
		{cmd: "python -m compileall -q src", ok: silent, exit: 1, fail: func(r *rand.Rand, p *project, path string, line int, ident string) string {
			return "*** Error compiling '" + path + "'...\n  File \"" + path + "\", line " + itoa(line) + "\n    return " + ident + "(\n           ^\nSyntaxError: '(' was never closed\n"
		}},
		{cmd: "mypy src", exit: 1, ok: func(r *rand.Rand, p *project) string {
			return "Success: no issues found in " + itoa(len(p.mods)*2+between(r, 1, 9)) + " source files\n"
		}, fail: func(r *rand.Rand, p *project, path string, line int, ident string) string {
			return path + ":" + itoa(line) + ": error: Name \"" + ident + "\" is not defined  [name-defined]\nFound 1 error in 1 file (checked " + itoa(len(p.mods)*2+3) + " source files)\n"
		}},
	}
	golang.build = []buildTool{
		{cmd: "go build ./...", ok: silent, exit: 1, fail: goCompileErr},
		{cmd: "go vet ./...", ok: silent, exit: 1, fail: goCompileErr},
	}
	typescript.build = []buildTool{
		{cmd: "npx tsc --noEmit", ok: silent, exit: 2, fail: func(r *rand.Rand, p *project, path string, line int, ident string) string {
			return path + "(" + itoa(line) + "," + itoa(between(r, 3, 40)) + "): error TS2304: Cannot find name '" + ident + "'.\n\nFound 1 error in " + path + ":" + itoa(line) + "\n"
		}},
		{cmd: "npm run build", exit: 1, ok: func(r *rand.Rand, p *project) string {
			return "\n> " + p.name + "@1." + itoa(between(r, 0, 9)) + ".0 build\n> vite build\n\nvite v5.4.2 building for production...\n✓ " + itoa(between(r, 40, 900)) +
				" modules transformed.\ndist/index.html                   0.46 kB │ gzip:  0.30 kB\ndist/assets/index-" + cut(r, hexPool(), 8) + ".js  " + itoa(between(r, 40, 400)) + ".31 kB │ gzip: 45.80 kB\n✓ built in " + secs(r, 500, 9000) + "s\n"
		}, fail: func(r *rand.Rand, p *project, path string, line int, ident string) string {
			return "\n> " + p.name + "@1.2.0 build\n> vite build\n\nvite v5.4.2 building for production...\n✓ 12 modules transformed.\nerror during build:\n" + path + " (" + itoa(line) + ":9): \"" + ident + "\" is not exported by \"src/index.ts\"\n"
		}},
	}
	rust.build = []buildTool{
		{cmd: "cargo build", exit: 101, ok: func(r *rand.Rand, p *project) string {
			return "   Compiling " + p.name + " v0.4.2 (" + p.root + ")\n    Finished `dev` profile [unoptimized + debuginfo] target(s) in " + secs(r, 800, 40000) + "s\n"
		}, fail: rustCompileErr},
		{cmd: "cargo check", exit: 101, ok: func(r *rand.Rand, p *project) string {
			return "    Checking " + p.name + " v0.4.2 (" + p.root + ")\n    Finished `dev` profile [unoptimized + debuginfo] target(s) in " + secs(r, 300, 9000) + "s\n"
		}, fail: rustCompileErr},
	}
	clang.build = []buildTool{
		{cmd: "make", exit: 2, ok: func(r *rand.Rand, p *project) string {
			var b strings.Builder
			for _, mod := range p.mods {
				b.WriteString("cc -std=c11 -Wall -Wextra -O2 -Iinclude -c src/" + mod + ".c -o build/" + mod + ".o\n")
			}
			b.WriteString("cc -o build/" + p.name + " build/*.o -lssl -lcrypto\n")
			return b.String()
		}, fail: func(r *rand.Rand, p *project, path string, line int, ident string) string {
			return path + ": In function 'main':\n" + path + ":" + itoa(line) + ":5: error: implicit declaration of function '" + ident + "' [-Wimplicit-function-declaration]\n   " + itoa(line) + " |     " + ident + "(buf, n);\n      |     ^~~~~~~\nmake: *** [Makefile:18: build/" + modOf(path) + ".o] Error 1\n"
		}},
	}

	python.install = []installTool{
		{cmd: "pip install -r requirements.txt", exit: 1, ok: func(r *rand.Rand, p *project) string {
			var b strings.Builder
			for _, d := range p.deps {
				b.WriteString("Collecting " + d + " (from -r requirements.txt (line " + itoa(between(r, 1, 20)) + "))\n  Downloading " + strings.ReplaceAll(d, "==", "-") + "-py3-none-any.whl.metadata (" + itoa(between(r, 2, 40)) + " kB)\n")
			}
			b.WriteString("Installing collected packages: " + strings.Join(depNames(p.deps), ", ") + "\nSuccessfully installed " + strings.Join(dashed(p.deps), " ") + "\n")
			return b.String()
		}, fail: func(r *rand.Rand, p *project, dep, bad string) string {
			return "Collecting " + dep + "==" + bad + " (from -r requirements.txt (line 3))\nERROR: Could not find a version that satisfies the requirement " + dep + "==" + bad + " (from versions: 1.0.0, 1.1.0, 2.0.1, 2.1.3)\nERROR: No matching distribution found for " + dep + "==" + bad + "\n"
		}},
		{cmd: "uv sync", exit: 1, ok: func(r *rand.Rand, p *project) string {
			var b strings.Builder
			b.WriteString("Resolved " + itoa(len(p.deps)+between(r, 5, 40)) + " packages in " + itoa(between(r, 20, 900)) + "ms\nInstalled " + itoa(len(p.deps)) + " packages in " + itoa(between(r, 20, 900)) + "ms\n")
			for _, d := range p.deps {
				b.WriteString(" + " + d + "\n")
			}
			return b.String()
		}, fail: func(r *rand.Rand, p *project, dep, bad string) string {
			return "  × No solution found when resolving dependencies:\n  ╰─▶ Because there is no version of " + dep + "==" + bad + " and your project depends on " + dep + "==" + bad + ", we can conclude that your project's requirements are unsatisfiable.\n"
		}},
	}
	golang.install = []installTool{
		{cmd: "go mod download", ok: silent, exit: 1, fail: goModErr},
		{cmd: "go mod tidy", exit: 1, ok: func(r *rand.Rand, p *project) string {
			var b strings.Builder
			for _, d := range p.deps {
				b.WriteString("go: downloading " + strings.ReplaceAll(d, "@", " ") + "\n")
			}
			return b.String()
		}, fail: goModErr},
	}
	typescript.install = []installTool{
		{cmd: "npm install", exit: 1, ok: func(r *rand.Rand, p *project) string {
			n := between(r, 120, 900)
			return "\nadded " + itoa(n) + " packages, and audited " + itoa(n+1) + " packages in " + itoa(between(r, 3, 40)) + "s\n\n" + itoa(between(r, 10, 90)) + " packages are looking for funding\n  run `npm fund` for details\n\nfound 0 vulnerabilities\n"
		}, fail: func(r *rand.Rand, p *project, dep, bad string) string {
			return "npm ERR! code ERESOLVE\nnpm ERR! ERESOLVE unable to resolve dependency tree\nnpm ERR! \nnpm ERR! While resolving: " + p.name + "@1.2.0\nnpm ERR! Found: react@18.3.1\nnpm ERR! node_modules/react\nnpm ERR!   react@\"^18.3.1\" from the root project\nnpm ERR! \nnpm ERR! Could not resolve dependency:\nnpm ERR! peer react@\"^17.0.0\" from " + dep + "@" + bad + "\nnpm ERR! \nnpm ERR! Fix the upstream dependency conflict, or retry\nnpm ERR! this command with --force or --legacy-peer-deps\n"
		}},
		{cmd: "pnpm install", exit: 1, ok: func(r *rand.Rand, p *project) string {
			n := itoa(between(r, 120, 900))
			var b strings.Builder
			b.WriteString("Lockfile is up to date, resolution step is skipped\nPackages: +" + n + "\n" + strings.Repeat("+", 60) + "\nProgress: resolved " + n + ", reused " + n + ", downloaded 0, added " + n + ", done\n\ndependencies:\n")
			for _, d := range p.deps {
				b.WriteString("+ " + strings.ReplaceAll(d, "@", " ") + "\n")
			}
			b.WriteString("\nDone in " + secs(r, 900, 20000) + "s\n")
			return b.String()
		}, fail: func(r *rand.Rand, p *project, dep, bad string) string {
			return " ERR_PNPM_NO_MATCHING_VERSION  No matching version found for " + dep + "@" + bad + "\n\nThis error happened while installing a direct dependency of " + p.root + "\n"
		}},
	}
	rust.install = []installTool{
		{cmd: "cargo fetch", exit: 101, ok: func(r *rand.Rand, p *project) string {
			var b strings.Builder
			b.WriteString("    Updating crates.io index\n")
			for _, d := range p.deps {
				b.WriteString("  Downloaded " + strings.ReplaceAll(d, "@", " v") + "\n")
			}
			b.WriteString("  Downloaded " + itoa(len(p.deps)+between(r, 10, 90)) + " crates (" + itoa(between(r, 1, 30)) + ".2 MB) in " + secs(r, 500, 9000) + "s\n")
			return b.String()
		}, fail: func(r *rand.Rand, p *project, dep, bad string) string {
			return "    Updating crates.io index\nerror: failed to select a version for the requirement `" + dep + " = \"^" + bad + "\"`\ncandidate versions found which didn't match: 1.0.3, 0.9.1, 0.8.7\nlocation searched: crates.io index\nrequired by package `" + p.name + " v0.4.2 (" + p.root + ")`\n"
		}},
	}
	clang.install = []installTool{
		{cmd: "./configure", exit: 1, ok: func(r *rand.Rand, p *project) string {
			return "checking for gcc... gcc\nchecking whether the C compiler works... yes\nchecking for C compiler default output file name... a.out\nchecking for suffix of executables... \nchecking for openssl/ssl.h... yes\nchecking for zlib.h... yes\nconfigure: creating ./config.status\nconfig.status: creating Makefile\n"
		}, fail: func(r *rand.Rand, p *project, dep, bad string) string {
			return "checking for gcc... gcc\nchecking whether the C compiler works... yes\nchecking for " + dep + "... no\nconfigure: error: " + dep + " not found; install the development package (version " + bad + " or later)\n"
		}},
	}
}

func goCompileErr(r *rand.Rand, p *project, path string, line int, ident string) string {
	return "# " + p.module + "/internal/" + modOf(path) + "\n" + path + ":" + itoa(line) + ":" + itoa(between(r, 2, 30)) + ": undefined: " + ident + "\n"
}

func goModErr(r *rand.Rand, p *project, dep, bad string) string {
	return "go: " + dep + "@" + bad + ": invalid version: unknown revision " + bad + "\n"
}

func rustCompileErr(r *rand.Rand, p *project, path string, line int, ident string) string {
	l := itoa(line)
	return "   Compiling " + p.name + " v0.4.2 (" + p.root + ")\nerror[E0425]: cannot find value `" + ident + "` in this scope\n  --> " + path + ":" + l + ":13\n   |\n" + l + " |     let x = " + ident + ";\n   |             ^^^^ not found in this scope\n\nFor more information about this error, try `rustc --explain E0425`.\nerror: could not compile `" + p.name + "` (lib) due to 1 previous error\n"
}

func depNames(deps []string) []string {
	out := make([]string, len(deps))
	for i, d := range deps {
		out[i] = strings.SplitN(d, "==", 2)[0]
	}
	return out
}

func dashed(deps []string) []string {
	out := make([]string, len(deps))
	for i, d := range deps {
		out[i] = strings.ReplaceAll(d, "==", "-")
	}
	return out
}

// depPool are dependency specs per language, as their manifests write them.
var depPool = map[*language][]string{
	python:     {"fastapi==0.111.0", "pydantic==2.8.2", "sqlalchemy==2.0.31", "httpx==0.27.0", "numpy==1.26.4", "uvicorn==0.30.1", "pytest==8.3.2", "structlog==24.2.0"},
	golang:     {"github.com/jackc/pgx/v5@v5.6.0", "github.com/go-chi/chi/v5@v5.1.0", "golang.org/x/sync@v0.8.0", "github.com/stretchr/testify@v1.9.0", "github.com/rs/zerolog@v1.33.0"},
	typescript: {"react@18.3.1", "zod@3.23.8", "vite@5.4.2", "vitest@2.0.5", "express@4.19.2", "@tanstack/react-query@5.51.1"},
	rust:       {"serde@1.0.210", "tokio@1.39.2", "clap@4.5.13", "anyhow@1.0.86", "reqwest@0.12.5", "thiserror@1.0.63"},
	clang:      {"openssl/ssl.h", "zlib.h", "curl/curl.h"},
}
