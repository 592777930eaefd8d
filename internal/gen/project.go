package gen

import (
	"math/rand/v2"
	"strings"
)

// project is the code base a session works on: its language, layout, tests
// and the current text of every file the session has looked at.
type project struct {
	lang   *language
	name   string
	user   string
	root   string // absolute path, the session's cwd
	pkg    string // python package / import root
	module string // Go module path
	branch string
	mods   []string
	fns    map[string][]string // module -> its functions
	tests  []testCase
	deps   []string
	runner *runner
	files  map[string]string // relative path -> current content
}

func newProject(r *rand.Rand) *project {
	l := pick(r, languages)
	p := &project{lang: l, name: pick(r, projectNames), user: pick(r, userNames), fns: map[string][]string{}, files: map[string]string{}}
	switch r.IntN(4) {
	case 0:
		p.root = "/home/" + p.user + "/src/" + p.name
	case 1:
		p.root = "/home/" + p.user + "/projects/" + p.name
	case 2:
		p.root = "/Users/" + p.user + "/code/" + p.name
	default:
		p.root = "/workspace/" + p.name
	}
	p.pkg = strings.ReplaceAll(p.name, "-", "_")
	p.module = "github.com/" + p.user + "-co/" + p.name
	p.branch = pick(r, []string{"main", "main", "master", "develop"})
	p.mods = pickN(r, modules, between(r, 3, 7))
	p.runner = pick(r, l.runners)
	p.deps = pickN(r, depPool[l], between(r, 2, len(depPool[l])))
	for _, mod := range p.mods {
		fns := make([]string, between(r, 2, 5))
		for i := range fns {
			fns[i] = l.ident(pick(r, verbs), pick(r, nouns))
		}
		p.fns[mod] = fns
		for i, n := 0, between(r, 2, 6); i < n; i++ {
			fn := pick(r, fns)
			p.tests = append(p.tests, testCase{name: l.testName(fn, pick(r, testWhat)), file: p.testPath(mod), fn: fn})
		}
	}
	return p
}

func (p *project) srcPath(mod string) string {
	return fill(p.lang.srcPath, "mod", mod, "pkg", p.pkg)
}

func (p *project) testPath(mod string) string {
	return fill(p.lang.testPath, "mod", mod, "pkg", p.pkg)
}

// abs is the absolute path of a project file.
func (p *project) abs(rel string) string { return p.root + "/" + rel }

// content returns the current text of a project file, making it up the
// first time it is asked for.
func (p *project) content(r *rand.Rand, rel string) string {
	if c, ok := p.files[rel]; ok {
		return c
	}
	mod := modOf(rel)
	var c string
	switch {
	case rel == p.lang.manifest:
		c = p.manifestText()
	case strings.Contains(rel, "test"):
		var tests []testCase
		for _, t := range p.tests {
			if t.file == rel {
				tests = append(tests, t)
			}
		}
		c = p.lang.testCode(r, p, mod, tests)
	case strings.HasSuffix(rel, ".md"):
		c = "# " + p.name + "\n\n" + prose(r, 3, "noun", pick(r, nouns), "cond", pick(r, conditions), "fn", pick(r, verbs), "Fn", capitalize(pick(r, verbs)), "field", pick(r, fields)) +
			"\n\n## Development\n\n```\n" + pick(r, p.lang.install).cmd + "\n" + pick(r, p.runner.cmds) + "\n```\n"
	default:
		fns := p.fns[mod]
		if len(fns) == 0 {
			fns = []string{p.lang.ident(pick(r, verbs), pick(r, nouns))}
		}
		c = p.lang.code(r, p, mod, fns)
	}
	p.files[rel] = c
	return c
}

func (p *project) manifestText() string {
	var b strings.Builder
	switch p.lang {
	case python:
		for _, d := range p.deps {
			b.WriteString(d + "\n")
		}
	case golang:
		b.WriteString("module " + p.module + "\n\ngo 1.23\n\nrequire (\n")
		for _, d := range p.deps {
			b.WriteString("\t" + strings.Replace(d, "@", " ", 1) + "\n")
		}
		b.WriteString(")\n")
	case typescript:
		b.WriteString("{\n  \"name\": \"" + p.name + "\",\n  \"version\": \"1.2.0\",\n  \"scripts\": {\n    \"build\": \"vite build\",\n    \"test\": \"vitest run\"\n  },\n  \"dependencies\": {\n")
		for i, d := range p.deps {
			at := strings.LastIndexByte(d, '@')
			b.WriteString("    \"" + d[:at] + "\": \"^" + d[at+1:] + "\"")
			if i < len(p.deps)-1 {
				b.WriteByte(',')
			}
			b.WriteByte('\n')
		}
		b.WriteString("  }\n}\n")
	case rust:
		b.WriteString("[package]\nname = \"" + p.name + "\"\nversion = \"0.4.2\"\nedition = \"2021\"\n\n[dependencies]\n")
		for _, d := range p.deps {
			parts := strings.SplitN(d, "@", 2)
			b.WriteString(parts[0] + " = \"" + parts[1] + "\"\n")
		}
	default:
		b.WriteString("CC ?= cc\nCFLAGS ?= -std=c11 -Wall -Wextra -O2 -Iinclude\nSRC := $(wildcard src/*.c)\nOBJ := $(SRC:src/%.c=build/%.o)\n\nall: build/" + p.name + "\n\nbuild/%.o: src/%.c\n\t$(CC) $(CFLAGS) -c $< -o $@\n\ntest: $(OBJ)\n\t$(CC) -o build/test_runner $(OBJ) tests/*.c vendor/unity/unity.c\n\t./build/test_runner\n")
	}
	return b.String()
}

// testsOf returns the tests of one module.
func (p *project) testsOf(mod string) []testCase {
	var out []testCase
	for _, t := range p.tests {
		if modOf(t.file) == mod {
			out = append(out, t)
		}
	}
	return out
}

// testTarget is what a runner command names to run one module's tests.
func (p *project) testTarget(mod string) string {
	switch p.lang {
	case golang:
		return "internal/" + mod
	case rust:
		return mod
	}
	return p.testPath(mod)
}

// testCmd picks a command line of the project's runner for a module.
func (p *project) testCmd(r *rand.Rand, mod string) string {
	tests := p.testsOf(mod)
	name := ""
	if len(tests) > 0 {
		name = tests[0].name
	}
	return fill(pick(r, p.runner.cmds), "target", p.testTarget(mod), "test", name)
}

// runTests prints a run of the suite: every test passes, or bad fails.
func (p *project) runTests(r *rand.Rand, mod string, bad *testCase, msg string) testRun {
	cmd := p.testCmd(r, mod)
	tests := p.tests
	if strings.Contains(cmd, p.testTarget(mod)) || strings.Contains(cmd, "-run") {
		tests = p.testsOf(mod)
	}
	out, code := p.runner.run(r, p, tests, bad, msg)
	if strings.HasPrefix(cmd, "make") && p.lang == golang {
		out = "go test -race ./...\n" + out
		if bad != nil {
			out += "make: *** [Makefile:14: test] Error 1\n"
			code = 2
		}
	}
	return testRun{cmd: cmd, out: out, exit: code}
}
