package gen

import "strings"

// lookAround is the agent finding its way around the code: k steps of
// reads, searches and shell commands near a module, with short narration.
func (s *sess) lookAround(mod string, k int) {
	r, p := s.rng, s.proj
	for i := 0; i < k; i++ {
		st := s.step()
		switch {
		case chance(r, 0.15):
			st.thinkHidden()
		case chance(r, 0.2):
			st.think(fill(pick(r, thoughts), s.kv(mod)...))
		}
		if chance(r, 0.6) {
			st.say(fill(pick(r, narration), s.kv(mod)...))
		}
		for j, n := 0, between(r, 1, 3); j < n; j++ {
			other := pick(r, p.mods)
			switch r.IntN(8) {
			case 0, 1:
				st.read(p.srcPath(other))
			case 2:
				st.read(p.testPath(other))
			case 3:
				fn := pick(r, p.fns[other])
				st.grep(fn, p.root, s.grepOut(fn))
			case 4:
				st.bash("git log --oneline -"+itoa(between(r, 8, 25)), "Recent commits", s.gitLog(), 0)
			case 5:
				dir := p.srcPath(other)
				dir = dir[:strings.LastIndexByte(dir, '/')]
				st.bash("ls -la "+dir, "List "+dir, s.listing(dir), 0)
			case 6:
				st.bash("git diff", "Show the working-tree diff", s.diff(), 0)
			default:
				var matches []string
				for _, m := range pickN(r, p.mods, between(r, 1, len(p.mods))) {
					matches = append(matches, p.abs(p.testPath(m)))
				}
				st.glob("**/*"+p.lang.ext, matches)
			}
		}
		st.done()
	}
}

var narration = []string{"Let me check how {fn} is used elsewhere.", "Now let me look at the callers.",
	"I'll check the recent history of this area.", "Let me see what else touches {field}.", "Checking the other modules that depend on {mod}.",
	"Let me look at the test setup.", "I want to see the current diff before going further.", "Looking at the directory layout."}

// gitLog prints a plausible one-line history.
func (s *sess) gitLog() string {
	r := s.rng
	var b strings.Builder
	for i, n := 0, between(r, 8, 25); i < n; i++ {
		b.WriteString(shortHash(r) + " " + pick(r, []string{"fix", "feat", "chore", "refactor", "test", "docs"}) + ": " +
			pick(r, verbs) + " " + pick(r, nouns) + " in " + pick(r, s.proj.mods) + "\n")
	}
	return b.String()
}

// listing prints `ls -la` of a directory.
func (s *sess) listing(dir string) string {
	r, p := s.rng, s.proj
	var b strings.Builder
	b.WriteString("total " + itoa(between(r, 16, 400)) + "\n")
	b.WriteString("drwxr-xr-x  " + itoa(between(r, 3, 12)) + " " + p.user + " staff   " + itoa(between(r, 96, 640)) + " Jan 12 10:41 .\n")
	for _, m := range p.mods {
		f := baseName(p.srcPath(m))
		b.WriteString("-rw-r--r--  1 " + p.user + " staff  " + itoa(between(r, 400, 30000)) + " Jan " + itoa(between(r, 1, 28)) + " " + itoa(between(r, 10, 23)) + ":" + pad3(between(r, 0, 59))[1:] + " " + f + "\n")
	}
	return b.String()
}

// diff prints a unified diff of the files the session touched.
func (s *sess) diff() string {
	r, p := s.rng, s.proj
	files := lastN(s.facts.files, 2)
	if len(files) == 0 {
		return ""
	}
	var b strings.Builder
	for _, f := range files {
		lines := strings.Split(p.content(r, f), "\n")
		at := r.IntN(len(lines))
		b.WriteString("diff --git a/" + f + " b/" + f + "\nindex " + shortHash(r) + ".." + shortHash(r) + " 100644\n--- a/" + f + "\n+++ b/" + f + "\n")
		b.WriteString("@@ -" + itoa(at+1) + ",6 +" + itoa(at+1) + ",7 @@\n")
		for i := at; i < min(len(lines), at+6); i++ {
			b.WriteString(" " + lines[i] + "\n")
		}
		b.WriteString("+" + p.lang.indent + p.lang.comment(pick(r, []string{"handle the empty case", "guard added", "bounds check"})) + "\n")
	}
	return b.String()
}
