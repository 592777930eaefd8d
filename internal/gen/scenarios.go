package gen

import (
	"strings"
)

// The scenarios. Each plays one kind of session on the session's project and
// labels the turns where its events make an anchor:
//
//   - error-resolution: a failure the user asked about, or that ended the
//     previous turn, is fixed and the fix is verified by a passing run
//     (tests, build, the program itself) in this turn;
//   - task-completion: the task the user asked for (a feature, a change, a
//     working setup, a research answer backed by sources) is finished and
//     verified in this turn;
//   - feature-milestone: one part of a multi-part feature is finished and
//     verified, and the work goes on with the next part;
//   - user-checkpoint: the user's prompt explicitly turns the session to
//     different work ("ok, now let's …").
//
// Nothing else is an anchor: failed attempts, unverified edits, commits,
// explanations, plans, answers from memory, thanks.

// kv returns the placeholder values of a module of the project.
func (s *sess) kv(mod string) []string {
	r, p := s.rng, s.proj
	fn := pick(r, p.fns[mod])
	return []string{"mod", mod, "fn", fn, "Fn", p.lang.exported(fn), "file", p.srcPath(mod), "noun", pick(r, nouns),
		"field", pick(r, fields), "cond", pick(r, conditions), "symptom", pick(r, symptoms), "branch", p.branch,
		"runner", p.runner.name}
}

// lookup returns the value of key in a placeholder list.
func lookup(kv []string, key string) string {
	for i := 0; i+1 < len(kv); i += 2 {
		if kv[i] == key {
			return kv[i+1]
		}
	}
	return ""
}

// reply is a step with only text: a reply that ends the turn.
func (s *sess) reply(text string) {
	st := s.step()
	if chance(s.rng, 0.25) {
		st.think(pick(s.rng, closingThoughts))
	}
	st.say(text).done()
	s.endTurn()
}

var closingThoughts = []string{"That covers it; I'll report back to the user.", "I have what I need, time to answer.",
	"Everything checks out. Summarise briefly.", "I'll answer directly and keep it short."}

var thoughts = []string{
	"Let me check how {fn} handles the case where {cond}.",
	"The change touches {file}; I should run the {mod} tests afterwards.",
	"I need to see the test first, then the implementation.",
	"This is probably a rounding issue in {fn}, but I should confirm it.",
	"I'll keep the change small and run the suite again.",
}

// snippet returns a line of a file to edit (unique in the file) and its
// replacement.
func (s *sess) snippet(rel string) (old, new string) {
	content := s.proj.content(s.rng, rel)
	lines := strings.Split(content, "\n")
	l := s.proj.lang
	for try := 0; try < 30; try++ {
		line := lines[s.rng.IntN(len(lines))]
		t := strings.TrimSpace(line)
		if len(t) < 12 || strings.Count(content, line) != 1 {
			continue
		}
		indent := line[:len(line)-len(strings.TrimLeft(line, " \t"))]
		guard := fill(pick(s.rng, guards[l]), "v", pick(s.rng, nouns), "n", itoa(between(s.rng, 0, 10)))
		return line, indent + strings.ReplaceAll(guard, "\n", "\n"+indent) + "\n" + line
	}
	return lines[0], lines[0] + "\n"
}

var guards = map[*language][]string{
	python:     {"if not {v}:\n    return []", "{v} = {v} or {n}", "# keep the original order for equal keys"},
	golang:     {"if len({v}) == 0 {\n\treturn nil, nil\n}", "// the limit is inclusive", "{v} = max({v}, {n})"},
	typescript: {"if ({v}.length === 0) return [];", "// keep insertion order", "{v} = Math.max({v}, {n});"},
	rust:       {"if {v}.is_empty() {\n    return Ok(Vec::new());\n}", "// the limit is inclusive", "let {v} = {v}.max({n});"},
	clang:      {"if ({v} == 0)\n    return 0;", "/* the limit is inclusive */", "{v} = {v} > {n} ? {v} : {n};"},
}

// explore reads a module's source and test (in parallel), sometimes after a
// grep for the function.
func (s *sess) explore(mod string, intro string) {
	p := s.proj
	st := s.step()
	if intro != "" {
		st.say(intro)
	}
	if chance(s.rng, 0.35) {
		fn := pick(s.rng, p.fns[mod])
		st.grep(fn, p.root, s.grepOut(fn))
	}
	st.read(p.srcPath(mod))
	if chance(s.rng, 0.7) {
		st.read(p.testPath(mod))
	}
	st.done()
}

// grepOut is what a grep for ident prints: matches across the project.
func (s *sess) grepOut(ident string) string {
	var b strings.Builder
	for _, mod := range pickN(s.rng, s.proj.mods, between(s.rng, 1, 4)) {
		for i, n := 0, between(s.rng, 1, 3); i < n; i++ {
			b.WriteString(s.proj.abs(s.proj.srcPath(mod)) + ":" + itoa(between(s.rng, 3, 300)) + ":" + s.proj.lang.indent + ident + "(" + pick(s.rng, nouns) + ")\n")
		}
	}
	return strings.TrimRight(b.String(), "\n")
}

// failing picks a failing test of a module with its message.
func (s *sess) failing(mod string) (testCase, string) {
	t := pick(s.rng, s.proj.testsOf(mod))
	return t, failMsg(s.rng, s.proj.lang, t.fn)
}

var (
	bugPrompts = []string{
		"The {test} test started failing after yesterday's merge. Can you find out why and fix it?",
		"{Fn} {symptom} when {cond}. Please fix it and make sure the tests pass.",
		"Getting this when I run `{cmd}`:\n\n```\n{err}\n```\n\ncan you take a look?",
		"bug: {fn} {symptom} if {cond}",
		"CI is red on {branch}: {test} fails. fix please",
		"Something's off in {mod}: {fn} {symptom} when {cond}. Can you dig in?",
	}
	bugIntro = []string{"Let me run the tests first to see the failure.", "I'll reproduce this first.",
		"Let me start by running the {mod} tests.", "First, the failing run:", ""}
	bugFound = []string{
		"Found it: {fn} doesn't handle the case where {cond}, so it {symptom}. Let me fix that.",
		"The test expects a different result because {fn} skips the {field} check. Fixing it.",
		"The problem is in `{file}`: the guard for {cond} is missing.",
		"I see the issue. {Fn} assumes the {noun} is always set.",
	}
	bugRetry = []string{"Still failing — the first change wasn't enough. Let me look again.",
		"Different failure now. Let me check the other branch of {fn}.", "Hmm, that didn't fix it. Looking closer."}
	bugDone = []string{
		"Fixed. {Fn} now handles the case where {cond}; the failing test passes and the rest of the suite is green.",
		"The bug was in `{file}`: {fn} didn't guard against {cond}. I added the check, and `{cmd}` now passes.",
		"Done — the {field} handling in {fn} was wrong. All tests pass now.",
		"That does it: the suite is green again.",
		"Fixed and verified with {runner}: no failures left.",
		"The fix is in `{file}`. I re-ran the tests and everything is ok.",
	}
	bugAsk = []string{
		"The failure comes from {fn}: it {symptom} when {cond}. Want me to fix it by adding a guard in `{file}`?",
		"I can reproduce it — {fn} {symptom}. Should I go ahead and fix it?",
		"Root cause: the {field} check in {fn} is missing. I can patch it; do you want me to?",
	}
	goAhead = []string{"yes, go ahead", "Yes please fix it.", "ok do it", "go for it, and run the tests after",
		"sure — keep the change minimal"}
)

// bugfix: a failure is reproduced, fixed and verified.
func bugfix(s *sess, lead string) {
	r, p := s.rng, s.proj
	mod := pick(r, p.mods)
	bad, msg := s.failing(mod)
	failRun := p.runTests(r, mod, &bad, msg)
	// The placeholders name the function under the failing test.
	kv := append([]string{"fn", bad.fn, "Fn", p.lang.exported(bad.fn)}, s.kv(mod)...)
	kv = append(kv, "test", bad.name, "cmd", failRun.cmd, "err", clip(firstLine(msg), 200))
	s.user(lead + fill(pick(r, bugPrompts), kv...))
	if lead != "" {
		s.label(UserCheckpoint, "user turns to a bug in "+mod)
	}

	st := s.step()
	if chance(r, 0.5) {
		st.thinkHidden()
	}
	if t := fill(pick(r, bugIntro), kv...); t != "" {
		st.say(t)
	}
	st.run(failRun, "Run the "+mod+" tests").done()
	s.explore(mod, "")
	s.lookAround(mod, between(r, 2, 8))

	twoTurns := chance(r, 0.3)
	if twoTurns {
		st := s.step().say(fill(pick(r, bugAsk), kv...))
		st.done()
		s.endTurn()
		s.user(pick(r, goAhead))
	}

	src := p.srcPath(mod)
	old, new := s.snippet(src)
	st = s.step().say(fill(pick(r, bugFound), kv...))
	st.edit(src, old, new)
	st.done()

	if chance(r, 0.25) { // the first fix is not enough
		bad2, msg2 := s.failing(mod)
		s.step().run(p.runTests(r, mod, &bad2, msg2), "Re-run the tests").done()
		s.step().say(fill(pick(r, bugRetry), kv...)).read(src).done()
		old, new = s.snippet(src)
		s.step().edit(src, old, new).done()
	}

	if chance(r, 0.3) {
		s.lookAround(mod, between(r, 1, 2))
	}
	verified := "tests"
	if chance(r, 0.2) { // verified by running the program rather than the suite
		verified = "a repro run"
		s.step().say("Let me check with the original repro.").bash(reproCmd(p), "Run the repro", reproOK(s, mod), 0).done()
	} else {
		s.step().say(fill(pick(r, []string{"Now the tests again.", "Running the suite again.", "Let me verify."}), kv...)).
			run(p.runTests(r, mod, nil, ""), "Run the tests").done()
	}
	s.reply(fill(pick(r, bugDone), kv...))
	s.label(ErrorResolution, "failing "+bad.name+" fixed in "+src+", verified by "+verified)

	s.afterwords(mod)
}

// reproCmd is how the project's program is run by hand.
func reproCmd(p *project) string {
	switch p.lang {
	case python:
		return "python -m " + p.pkg + " --check sample.json"
	case golang:
		return "go run ./cmd/" + p.name + " -check testdata/sample.json"
	case typescript:
		return "npx tsx scripts/repro.ts"
	case rust:
		return "cargo run --quiet -- check samples/sample.json"
	}
	return "./build/" + p.name + " --check samples/sample.json"
}

func reproOK(s *sess, mod string) string {
	return pick(s.rng, []string{"checked 214 records: 0 mismatches", "total: 1,204.68 EUR (expected 1,204.68)",
		"{\"status\":\"ok\",\"count\":" + itoa(between(s.rng, 2, 400)) + "}", mod + ": all " + itoa(between(s.rng, 3, 90)) + " cases match"})
}

// afterwords are the small turns that often follow a finished task: a
// regression test (a task of its own), a commit, thanks. Only the first one
// is an anchor, and only when it is verified.
func (s *sess) afterwords(mod string) {
	r, p := s.rng, s.proj
	switch r.IntN(5) {
	case 0:
		s.user(pick(r, []string{"Can you add a regression test for this?", "please add a test that would have caught it", "add a test for that case too"}))
		test := p.testPath(mod)
		old, new := s.snippet(test)
		s.step().say("Adding a test for it.").edit(test, old, new).done()
		s.step().run(p.runTests(r, mod, nil, ""), "Run the tests").done()
		s.reply(pick(r, []string{"Added the test; it passes with the fix and fails without it.", "Test added — suite is green.", "Done, the new test is in `" + test + "`."}))
		s.label(TaskCompletion, "regression test added and run")
	case 1:
		s.commit()
	case 2:
		s.user(pick(r, []string{"thanks!", "great, thanks", "perfect", "nice, ty"}))
		s.reply(pick(r, []string{"You're welcome!", "Glad it's sorted.", "Anytime."}))
	}
}

// commit is a turn that commits the work: routine, not an anchor.
func (s *sess) commit() {
	r, p := s.rng, s.proj
	s.user(pick(r, []string{"commit this", "Commit it with a good message.", "ok, commit and we're done", "please commit"}))
	msg := pick(r, []string{"fix", "feat", "chore"}) + ": " + pick(r, verbs) + " " + pick(r, nouns) + " in " + pick(r, p.mods)
	st := s.step()
	changed := lastN(s.facts.files, 4)
	if len(changed) == 0 {
		changed = []string{p.srcPath(pick(r, p.mods))}
	}
	var status, stat strings.Builder
	for _, f := range changed {
		status.WriteString(" M " + f + "\n")
		stat.WriteString(" " + f + " | " + itoa(between(r, 2, 40)) + " ++++--\n")
	}
	st.bash("git status --short", "Show changes", status.String(), 0)
	st.bash("git diff --stat", "Diff summary", stat.String()+" "+itoa(len(changed))+" files changed", 0)
	st.done()
	out := "[" + p.branch + " " + shortHash(r) + "] " + msg + "\n " + itoa(between(r, 1, 5)) + " files changed, " + itoa(between(r, 2, 90)) + " insertions(+), " + itoa(between(r, 0, 30)) + " deletions(-)"
	s.step().bash("git add -A && git commit -m \""+msg+"\"", "Commit", out, 0).done()
	s.reply("Committed as `" + msg + "`.")
}

var (
	featPrompts = []string{
		"Add {feature}. Start with this: {part}.",
		"I'd like {feature}. First step: {part}.",
		"Can you implement {feature}? Let's begin with: {part}.",
		"We need {feature}. Please {part} first.",
	}
	nextPart = []string{"Looks good. Now {part}.", "great — next, {part}", "ok, go on: {part}", "Nice. Next step: {part}.",
		"that works. {Part} next please"}
	featDone = []string{
		"Done: {part}. The build is clean and the tests pass.",
		"Implemented — {part}. `{cmd}` runs clean.",
		"{Part}: finished and checked.",
		"That part is in place ({files}), and everything compiles and the suite passes.",
		"Finished {part}. Ran the checks, all good.",
	}
	featUnverified = []string{"I've written {part}, but haven't run anything yet — want me to?", "Here's a first pass at {part}; I didn't run the tests."}
)

// feature: a feature built in parts across several files.
func feature(s *sess, lead string) {
	r, p := s.rng, s.proj
	idea := pick(r, features)
	parts := idea.parts[:between(r, 1, len(idea.parts))]
	mod := pick(r, p.mods)
	newMod := pick(r, modules)
	for _, m := range p.mods {
		if m == newMod {
			newMod += "_v2"
		}
	}
	for i, part := range parts {
		kv := append(s.kv(mod), "feature", idea.name, "part", part, "Part", capitalize(part))
		if i == 0 {
			s.user(lead + fill(pick(r, featPrompts), kv...))
			if lead != "" {
				s.label(UserCheckpoint, "user turns to "+idea.name)
			}
		} else {
			s.user(fill(pick(r, nextPart), kv...))
		}
		if i == 0 {
			st := s.step()
			if chance(r, 0.5) {
				st.think("The user wants " + idea.name + ". I should look at how " + mod + " is laid out first.")
			}
			if !s.prof.hooks && chance(r, 0.6) {
				var items []todoItem
				for j, pt := range parts {
					status := "pending"
					if j == 0 {
						status = "in_progress"
					}
					items = append(items, todoItem{pt, status})
				}
				st.todo(items)
			}
			var matches []string
			for _, m := range p.mods {
				matches = append(matches, p.abs(p.srcPath(m)))
			}
			st.glob("**/*"+p.lang.ext, matches)
			st.done()
			if chance(r, 0.25) {
				s.exploreAgent(mod)
			} else {
				s.explore(mod, "Let me read the "+mod+" code.")
			}
			s.lookAround(mod, between(r, 3, 10))
		} else {
			s.lookAround(mod, between(r, 1, 5))
		}

		// Write the new code and wire it in.
		newFile := p.srcPath(newMod)
		fns := []string{p.lang.ident(pick(r, verbs), pick(r, nouns)), p.lang.ident(pick(r, verbs), pick(r, nouns))}
		p.fns[newMod] = fns
		st := s.step().say(fill(pick(r, []string{"I'll add the new code in `" + newFile + "` and wire it into {mod}.", "On to this part: {part}.", "Now the implementation."}), kv...))
		if i == 0 {
			st.write(newFile, p.lang.code(r, p, newMod, fns))
		} else {
			old, new := s.snippet(newFile)
			st.edit(newFile, old, new)
		}
		src := p.srcPath(mod)
		old, new := s.snippet(src)
		st.edit(src, old, new)
		st.done()
		for _, other := range pickN(r, p.mods, between(r, 0, 3)) {
			f := p.srcPath(other)
			if chance(r, 0.5) {
				f = p.testPath(other)
			}
			old, new := s.snippet(f)
			s.step().say(fill(pick(r, []string{"Updating {file} too.", "And the call site.", "Now the tests for it."}), "file", f)).edit(f, old, new).done()
		}

		if chance(r, 0.3) { // a compile error on the way, fixed by the agent
			bt := pick(r, p.lang.build)
			ident := p.lang.ident(pick(r, verbs), pick(r, nouns))
			s.step().bash(bt.cmd, "Build", bt.fail(r, p, src, between(r, 5, 200), ident), bt.exit).done()
			old, new := s.snippet(src)
			s.step().say("Missing import — fixing.").edit(src, old, new).done()
		}

		verified := chance(r, 0.88)
		cmd := ""
		if verified {
			if chance(r, 0.3) {
				bt := pick(r, p.lang.build)
				cmd = bt.cmd
				s.step().bash(bt.cmd, "Build", bt.ok(r, p), 0).done()
			} else {
				tr := p.runTests(r, mod, nil, "")
				cmd = tr.cmd
				s.step().say("Running the tests.").run(tr, "Run the tests").done()
			}
			kv = append(kv, "cmd", cmd, "files", "`"+newFile+"`, `"+src+"`")
			s.reply(fill(pick(r, featDone), kv...))
		} else {
			s.reply(fill(pick(r, featUnverified), kv...))
		}
		switch {
		case !verified:
		case i < len(parts)-1:
			s.label(FeatureMilestone, "part "+itoa(i+1)+" of "+itoa(len(parts))+" of "+idea.name+" done ("+part+"), verified by "+cmd)
		default:
			s.label(TaskCompletion, idea.name+" finished ("+itoa(len(parts))+" part(s)), verified by "+cmd)
		}
	}
	if chance(r, 0.4) {
		s.commit()
	}
}

// exploreAgent hands exploration of a module to an Explore subagent.
func (s *sess) exploreAgent(mod string) {
	p := s.proj
	prompt := "Explore how " + mod + " is structured in " + p.root + ": list its main functions, where they are called from, and how it is tested. Report file paths."
	st := s.step().say("I'll have an agent map out " + mod + " first.")
	st.task("Explore", "Explore "+mod, prompt, func(s *sess) string {
		a := s.step().say("I'll look at the " + mod + " package.")
		var matches []string
		for _, m := range p.mods {
			matches = append(matches, p.abs(p.srcPath(m)), p.abs(p.testPath(m)))
		}
		a.glob("**/*"+p.lang.ext, matches)
		a.done()
		b := s.step()
		b.read(p.srcPath(mod))
		b.read(p.testPath(mod))
		b.grep(pick(s.rng, p.fns[mod]), p.root, s.grepOut(pick(s.rng, p.fns[mod])))
		b.done()
		var rep strings.Builder
		rep.WriteString("## " + mod + "\n\nMain file: `" + p.abs(p.srcPath(mod)) + "`\n\nFunctions:\n")
		for _, fn := range p.fns[mod] {
			rep.WriteString("- `" + p.lang.exported(fn) + "` — " + prose(s.rng, 1, "noun", pick(s.rng, nouns), "cond", pick(s.rng, conditions), "fn", fn, "Fn", fn, "field", pick(s.rng, fields)) + "\n")
		}
		rep.WriteString("\nTests live in `" + p.abs(p.testPath(mod)) + "` (" + itoa(len(p.testsOf(mod))) + " tests, run with " + p.runner.name + ").\n")
		s.step().say(rep.String()).done()
		return rep.String()
	})
	st.done()
}

// research: questions answered from web sources.
func research(s *sess, lead string) {
	r := s.rng
	type question struct {
		t     *topic
		q     string
		first bool
	}
	var qs []question
	for _, t := range pickN(r, researchTopics, between(r, 1, 2)) {
		qs = append(qs, question{t, t.q, true})
		if chance(r, 0.5) {
			qs = append(qs, question{t, pick(r, []string{"And ", "Follow-up: ", "Also — ", ""}) + t.follow, false})
		}
	}
	for i, qq := range qs {
		t := qq.t
		switch {
		case i == 0:
			s.user(lead + qq.q)
			if lead != "" {
				s.label(UserCheckpoint, "user turns to researching "+t.name)
			}
		case qq.first:
			s.user(pick(r, switchLeads) + qq.q)
			s.label(UserCheckpoint, "user switches to researching "+t.name)
		default:
			s.user(qq.q)
		}
		st := s.step()
		if chance(r, 0.5) {
			st.thinkHidden()
		}
		st.say(pick(r, []string{"I'll search for this.", "Let me look this up.", "Searching for current information on " + t.name + "."}))
		for _, q := range pickN(r, t.queries, between(r, 1, len(t.queries))) {
			st.webSearch(q, pickN(r, t.sites, between(r, 2, len(t.sites))), t.digest(s))
		}
		st.done()
		for k := between(r, 0, 2); k > 0; k-- {
			st := s.step().say(pick(r, []string{"Let me narrow that down.", "One more search to confirm.", "Checking a second source."}))
			st.webSearch(pick(r, t.queries)+" "+pick(r, []string{"2025", "best practices", "example", "docs"}), pickN(r, t.sites, 2), t.digest(s))
			st.done()
		}

		failed := chance(r, 0.12)
		if chance(r, 0.3) && !failed {
			s.researchAgent(t)
		}
		fs := s.step()
		for _, site := range pickN(r, t.sites, between(r, 1, 2)) {
			code := 200
			if failed || chance(r, 0.1) {
				code = pick(r, []int{403, 404, 429})
			}
			fs.webFetch(site.url, "What does this page say about "+t.name+"?", t.page(s), code)
		}
		fs.done()
		if failed {
			s.reply(pick(r, []string{"I couldn't find an authoritative answer — the pages I tried were blocked or out of date. Do you have a link to the docs you use?",
				"The sources disagree and the official page wouldn't load, so I can't give a reliable answer yet."}))
			continue
		}
		s.reply(t.synthesis(s))
		s.label(TaskCompletion, "research question on "+t.name+" answered from web sources")
	}
	if chance(r, 0.3) {
		s.user(pick(r, []string{"thanks, that helps", "great, thank you!", "perfect"}))
		s.reply(pick(r, []string{"Happy to help.", "You're welcome!"}))
	}
}

// researchAgent hands part of a research question to a subagent.
func (s *sess) researchAgent(t *topic) {
	st := s.step().say("I'll have an agent dig through the details in parallel.")
	st.task("general-purpose", "Research "+t.name, "Research "+t.name+": "+t.q+" Return the key facts with source URLs.", func(s *sess) string {
		a := s.step().say("Searching.")
		for _, q := range t.queries {
			a.webSearch(q, pickN(s.rng, t.sites, 2), t.digest(s))
		}
		a.done()
		b := s.step()
		for _, site := range pickN(s.rng, t.sites, 2) {
			b.webFetch(site.url, "Summarise what this says about "+t.name, t.page(s), 200)
		}
		b.done()
		rep := t.synthesis(s)
		s.step().say(rep).done()
		return rep
	})
	st.done()
}

// setup: install dependencies, fix what breaks, build.
func setup(s *sess, lead string) {
	r, p := s.rng, s.proj
	kv := s.kv(pick(r, p.mods))
	s.user(lead + fill(pick(r, []string{
		"I just cloned " + p.name + ". Can you get it building locally?",
		"Set up this project: install the dependencies and make sure it builds.",
		"Please get the dev environment working — deps, build, tests.",
		"new machine, need " + p.name + " running. install everything and check the build",
	}), kv...))
	if lead != "" {
		s.label(UserCheckpoint, "user turns to setting up the environment")
	}
	inst := pick(r, p.lang.install)
	outcome := r.IntN(10)
	if p.lang == clang && outcome >= 4 {
		outcome = 9 // C dependencies are system packages: only the user can install them
	}
	dep, bad := s.badDep()
	if outcome >= 4 && outcome < 8 {
		s.pin(dep, bad) // the manifest the agent is about to read pins a missing version
	}
	st := s.step()
	st.say("Let me look at the project first.")
	st.read("README.md")
	st.read(p.lang.manifest)
	st.done()

	switch {
	case outcome < 4: // clean install
		s.step().say("Installing dependencies.").bash(inst.cmd, "Install dependencies", inst.ok(r, p), 0).done()
	case outcome < 8: // a bad pin the agent fixes itself
		s.step().say("Installing dependencies.").bash(inst.cmd, "Install dependencies", inst.fail(r, p, dep, bad), inst.exit).done()
		man := p.lang.manifest
		old, new := s.bumpDep(man, dep)
		s.step().say("The pinned version of "+dep+" doesn't exist. I'll bump it.").edit(man, old, new).done()
		s.step().bash(inst.cmd, "Install dependencies", inst.ok(r, p), 0).done()
	default: // needs the user: a system package (C) or registry credentials
		out, ask := inst.fail(r, p, dep, bad), "This needs a system package I can't install without sudo ("+dep+"). Could you run `sudo apt-get install -y "+sysPkg(dep)+"` and tell me when it's done?"
		if p.lang != clang {
			out, ask = authFail(p, dep), "The package registry wants credentials (HTTP 401) for "+dep+". Could you log in to it and tell me when it's done?"
		}
		s.step().say("Installing dependencies.").bash(inst.cmd, "Install dependencies", out, inst.exit).done()
		s.reply(ask)
		s.user(pick(r, []string{"done, try again", "ok, done. retry", "Done."}))
		s.step().say("Retrying.").bash(inst.cmd, "Install dependencies", inst.ok(r, p), 0).done()
		bt := pick(r, p.lang.build)
		s.step().bash(bt.cmd, "Build", bt.ok(r, p), 0).done()
		s.reply(pick(r, []string{"Dependencies are in and the build succeeds now.", "Works now: install and build both went through."}))
		s.label(ErrorResolution, "install failure from the previous turn resolved; install and build verified")
		s.setupTail()
		return
	}
	bt := pick(r, p.lang.build)
	s.step().say("Now the build.").bash(bt.cmd, "Build", bt.ok(r, p), 0).done()
	verifiedBy := bt.cmd
	if chance(r, 0.5) {
		mod := pick(r, p.mods)
		tr := p.runTests(r, mod, nil, "")
		verifiedBy += " and " + tr.cmd
		s.step().run(tr, "Run the tests").done()
	}
	s.reply(pick(r, []string{"The project is set up: dependencies installed, the build is clean.", "All set. Everything installs and builds.",
		"Environment ready — `" + bt.cmd + "` works.", "Done; you can build and test locally now."}))
	s.label(TaskCompletion, "environment set up, verified by "+verifiedBy)
	s.setupTail()
}

// setupTail sometimes asks for the dev server after a setup.
func (s *sess) setupTail() {
	r := s.rng
	if !chance(r, 0.35) {
		return
	}
	s.user(pick(r, []string{"now start the dev server", "can you run it to check it actually starts?"}))
	out := pick(r, []string{"Listening on http://127.0.0.1:8080", "  VITE v5.4.2  ready in 512 ms\n\n  ➜  Local:   http://localhost:5173/",
		"INFO:     Uvicorn running on http://127.0.0.1:8000 (Press CTRL+C to quit)\nINFO:     Application startup complete."})
	s.step().bash(pick(r, []string{"npm run dev &", "make run &", "./scripts/dev.sh"}), "Start the dev server", out, 0).done()
	s.reply("It starts and listens fine.")
	s.label(TaskCompletion, "dev server started and checked")
}

func (s *sess) badDep() (string, string) {
	p := s.proj
	d := pick(s.rng, p.deps)
	for _, sep := range []string{"==", "@"} {
		if i := strings.LastIndex(d, sep); i > 0 {
			d = d[:i]
		}
	}
	ver := itoa(between(s.rng, 7, 12)) + "." + itoa(between(s.rng, 0, 9)) + ".0"
	if p.lang == golang {
		ver = "v" + ver
	}
	return d, ver
}

// bumpDep returns the manifest line that pins dep and the line with another
// version.
func (s *sess) bumpDep(manifest, dep string) (old, new string) {
	for _, line := range strings.Split(s.proj.content(s.rng, manifest), "\n") {
		i := strings.Index(line, dep)
		if i < 0 {
			continue
		}
		j := i + len(dep)
		for j < len(line) && (line[j] < '0' || line[j] > '9') {
			j++
		}
		k := j
		for k < len(line) && (line[k] == '.' || line[k] >= '0' && line[k] <= '9') {
			k++
		}
		if k == j {
			continue
		}
		ver := itoa(between(s.rng, 1, 3)) + "." + itoa(between(s.rng, 0, 9)) + "." + itoa(between(s.rng, 0, 9))
		return line, line[:j] + ver + line[k:]
	}
	return s.snippet(manifest)
}

// pin makes the project's manifest pin dep at version ver.
func (s *sess) pin(dep, ver string) {
	p := s.proj
	for i, d := range p.deps {
		for _, sep := range []string{"==", "@"} {
			if j := strings.LastIndex(d, sep); j > 0 && d[:j] == dep {
				p.deps[i] = dep + sep + ver
			}
		}
	}
	delete(p.files, p.lang.manifest) // made again from the deps when next read
}

// authFail is what an installer prints when a private registry refuses it.
func authFail(p *project, dep string) string {
	switch p.lang {
	case python:
		return "ERROR: HTTP error 401 while getting https://pypi.internal.example/simple/" + dep + "/\nERROR: 401 Client Error: Unauthorized for url: https://pypi.internal.example/simple/" + dep + "/\n"
	case golang:
		return "go: " + dep + ": reading https://goproxy.internal.example/" + dep + "/@v/list: 401 Unauthorized\n"
	case typescript:
		return "npm ERR! code E401\nnpm ERR! Unable to authenticate, need: Basic realm=\"npm.internal.example\"\n"
	}
	return "error: failed to download from `https://crates.internal.example/api/v1/crates/" + dep + "/download`\n\nCaused by:\n  failed to get successful HTTP response, got 401\n"
}

func sysPkg(dep string) string {
	switch {
	case strings.Contains(dep, "ssl"):
		return "libssl-dev"
	case strings.Contains(dep, "zlib"):
		return "zlib1g-dev"
	case strings.Contains(dep, "curl"):
		return "libcurl4-openssl-dev"
	}
	return "build-essential pkg-config"
}

// qa: questions answered without tools; sometimes the user switches topic.
func qa(s *sess, lead string) {
	r := s.rng
	topics := pickN(r, qaTopics, between(r, 1, 3))
	for i, t := range topics {
		for j, q := range pickN(r, t.qs, between(r, 1, len(t.qs))) {
			switch {
			case i == 0 && j == 0:
				s.user(lead + q)
				if lead != "" {
					s.label(UserCheckpoint, "user turns to questions about "+t.name)
				}
			case j == 0:
				s.user(pick(r, switchLeads) + q)
				s.label(UserCheckpoint, "user switches topic to "+t.name)
			default:
				s.user(q)
			}
			s.reply(t.answer(s))
		}
	}
}

var switchLeads = []string{"ok, different topic: ", "Switching gears — ", "Unrelated question: ", "Let's move on. ",
	"new question. ", "OK now something else: "}

// mixed: a long session of several tasks, each after an explicit change of
// direction.
func mixed(s *sess, lead string) {
	r := s.rng
	kinds := []func(*sess, string){bugfix, feature, setup, research, qa, bugfix, feature}
	n := between(r, 5, 12)
	for i := 0; i < n; i++ {
		play := pick(r, kinds)
		l := lead
		if i > 0 {
			l = pick(r, directionLeads)
		}
		play(s, l)
	}
}

var directionLeads = []string{"ok, now let's move on. ", "Great, that's done. Next: ", "Let's switch to something else. ",
	"Moving on — ", "ok now let's work on something different. ", "Forget that for now. ", "Next task: "}

// noAnchor: sessions that never reach a natural anchor.
func noAnchor(s *sess, lead string) {
	r, p := s.rng, s.proj
	mod := pick(r, p.mods)
	kv := s.kv(mod)
	switch r.IntN(3) {
	case 0: // debugging that goes nowhere
		bad, msg := s.failing(mod)
		tr := p.runTests(r, mod, &bad, msg)
		kv = append(kv, "test", bad.name, "cmd", tr.cmd, "err", clip(firstLine(msg), 200))
		s.user(lead + fill(pick(r, bugPrompts), kv...))
		s.step().say("Let me reproduce it.").run(tr, "Run the tests").done()
		s.explore(mod, "")
		s.lookAround(mod, between(r, 2, 6))
		src := p.srcPath(mod)
		old, new := s.snippet(src)
		st := s.step().say(fill(pick(r, bugFound), kv...))
		st.edit(src, old, new)
		st.read(p.testPath(mod)) // a test file mentioning tests, read successfully
		st.done()
		bad2, msg2 := s.failing(mod)
		s.step().run(p.runTests(r, mod, &bad2, msg2), "Re-run the tests").done()
		s.reply(fill(pick(r, bugRetry), kv...) + " The failure moved, so the root cause is elsewhere.")
		s.user(pick(r, []string{"hmm, still failing. try looking at the caller", "still red. maybe it's the fixture?", "no luck. check the config loading"}))
		st = s.step().say("Looking at the caller.")
		fn := lookup(kv, "fn")
		st.grep(fn, p.root, s.grepOut(fn))
		st.readMissing(p.srcPath(mod) + ".orig")
		st.done()
		old, new = s.snippet(src)
		s.step().editMiss(src, old+" ", new).done()
		s.step().run(p.runTests(r, mod, &bad2, msg2), "Re-run the tests").done()
		if chance(r, 0.5) {
			s.interrupt()
		}
		s.user(pick(r, []string{"let's stop here, I'll look at it tomorrow", "park this. revert your changes for now", "ok never mind, I'll ask the team"}))
		s.reply(pick(r, []string{"Understood. Summary so far: the failure is still open; my two attempts didn't fix it.",
			"Sure — I'll leave it. The tests are still failing; the last error was in " + bad2.name + "."}))
	case 1: // a plan that is never carried out
		idea := pick(r, features)
		s.user(lead + "How would you approach " + idea.name + "? Don't write code yet, just a plan.")
		s.explore(mod, "Let me look at the current code first.")
		var plan strings.Builder
		plan.WriteString("Here's how I'd do it:\n\n")
		for i, part := range idea.parts {
			plan.WriteString(itoa(i+1) + ". " + capitalize(part) + " — " + prose(r, 1, kv...) + "\n")
		}
		plan.WriteString("\nRisks: " + prose(r, 2, kv...))
		s.reply(plan.String())
		s.user(pick(r, []string{"let me think about it and get back to you", "ok, I'll discuss with the team first", "hmm, not sure yet. later"}))
		s.reply("Sure — ping me when you want to start.")
	default: // a setup that fails and is abandoned
		s.user(lead + "Can you get the project building? I keep getting errors.")
		inst := pick(r, p.lang.install)
		dep, bad := s.badDep()
		st := s.step().say("Installing first.")
		st.bash(inst.cmd, "Install dependencies", inst.fail(r, p, dep, bad), inst.exit)
		st.done()
		if chance(r, 0.5) {
			// A decoy: a tool install that succeeds and prints "Successfully installed".
			s.step().bash("pip install --upgrade pip", "Upgrade pip", "Requirement already satisfied: pip in ./.venv/lib/python3.12/site-packages (24.0)\nCollecting pip\n  Downloading pip-24.2-py3-none-any.whl (1.8 MB)\nSuccessfully installed pip-24.2", 0).done()
		}
		s.step().bash(inst.cmd, "Install dependencies", inst.fail(r, p, dep, bad), inst.exit).done()
		s.reply("The dependency " + dep + " can't be resolved at version " + bad + ", and I don't know which version your team uses. Which one should I pin?")
		s.user(pick(r, []string{"no idea, let's leave it", "I'll check with the team, stop for now"}))
		s.reply("OK, leaving it as is.")
	}
}
