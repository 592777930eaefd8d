package anchors

import (
	"strings"

	"github.com/compactbench/compactbench/internal/transcript"
)

// Features of a turn that rules test through the conditions changed,
// checked, git, fail_then_pass, fixed_in_turn, passes_again and exercised,
// and that `inspect --digest` shows a reader.

// scratchPrefixes are directories whose files are scratch work, not a
// change to the project.
var scratchPrefixes = []string{"/tmp/", "/var/tmp/", "/private/tmp/", "/private/var/folders/", "/var/folders/", "/dev/", "$TMPDIR", "${TMPDIR", "%TEMP%", `C:\Windows\Temp`}

// IsScratchPath reports whether a path is under a temporary directory.
func IsScratchPath(p string) bool {
	p = strings.Trim(p, `"'`)
	for _, s := range scratchPrefixes {
		if strings.HasPrefix(p, s) || p+"/" == s {
			return true
		}
	}
	return strings.Contains(p, "/AppData/Local/Temp/") || strings.Contains(p, `\AppData\Local\Temp\`)
}

// patchFileRE finds the files an apply_patch body touches.
var patchFileRE = lazyRE(`(?m)^\*\*\* (?:Update|Add|Delete) File: (\S.*)$`)

// writeTargetRE finds files a shell command writes: redirections, tee,
// in-place sed/perl, touch, cp/mv destinations are approximated by their
// last argument.
var (
	redirectRE = lazyRE(`(?:^|[^0-9&<>])>>?\s*([^\s;&|<>()]+)`)
	teeRE      = lazyRE(`\btee\s+(?:-a\s+)?([^\s;&|<>()]+)`)
	inPlaceRE  = lazyRE(`\b(?:sed|perl)\s+(?:-[a-zA-Z]*\s+)*-[a-zA-Z]*i[a-zA-Z.]*\b[^;&|]*?\s([^\s;&|<>()'"]+)\s*(?:$|[;&|])`)
	touchCpRE  = lazyRE(`\b(?:touch|cp|mv|install|mkdir -p|mkdir|ln -s|git apply|patch)\s+(?:-[a-zA-Z]+\s+)*[^;&|]*?([^\s;&|<>()'"]+)\s*(?:$|[;&|])`)
)

// CommandWrites returns the files a shell command appears to write
// (redirections, tee, sed -i, touch, cp, mv, mkdir, git apply, apply_patch).
// It is a heuristic over the command text; /dev/null and scratch paths are
// left out by the caller through IsScratchPath.
func CommandWrites(cmd string) []string {
	var out []string
	if strings.Contains(cmd, "apply_patch") || strings.Contains(cmd, "*** Begin Patch") {
		for _, m := range patchFileRE.FindAllStringSubmatch(cmd, -1) {
			out = append(out, strings.TrimSpace(m[1]))
		}
	}
	// Heredoc bodies are data, not commands: only the first line of each
	// heredoc command counts.
	lines := strings.Split(cmd, "\n")
	var b strings.Builder
	heredoc := ""
	for _, l := range lines {
		if heredoc != "" {
			if strings.TrimSpace(l) == heredoc {
				heredoc = ""
			}
			continue
		}
		b.WriteString(l)
		b.WriteByte('\n')
		if i := strings.Index(l, "<<"); i >= 0 {
			w := strings.Fields(strings.TrimLeft(l[i+2:], "-~ "))
			if len(w) > 0 {
				heredoc = strings.Trim(w[0], `'"`)
			}
		}
	}
	s := b.String()
	for _, re := range []*lazyRegexp{redirectRE, teeRE, inPlaceRE, touchCpRE} {
		for _, m := range re.FindAllStringSubmatch(s, -1) {
			p := strings.Trim(m[1], `"'`)
			if p == "" || p == "&1" || p == "&2" || strings.HasPrefix(p, "-") {
				continue
			}
			out = append(out, p)
		}
	}
	return out
}

// systemChangeRE finds commands that change the machine rather than a
// file the command names: installing or removing packages, starting or
// restarting services, writing settings, creating branches, removing files,
// migrating a database.
var systemChangeRE = lazyRE(`(?m)(?:^|[;&|(]\s*|sudo\s+)(brew (?:install|uninstall|upgrade|reinstall|remove|services (?:start|restart|stop))|apt(?:-get)? (?:-y )?(?:install|remove|purge|upgrade)|dnf (?:install|remove)|yum (?:install|remove)|opkg (?:install|remove)|pip3? install|uv (?:add|pip install|sync)|npm (?:install|i|uninstall|ci)\b|pnpm (?:add|remove|install)|yarn (?:add|remove)|cargo (?:add|install)|go (?:get|install)|systemctl (?:--user )?(?:enable|disable|restart|start|stop|reload)|service \S+ (?:restart|start|stop|reload)|launchctl (?:load|unload|bootstrap|bootout|kickstart)|uci (?:set|delete|commit|add)|defaults write|git (?:checkout -b|switch -c|mv|rm|restore|reset --hard|init|clone)|chmod|chown|rm|rmdir|unlink|ln -s|docker (?:compose )?(?:up|run|build|rm|restart)|kubectl (?:apply|delete|rollout)|python3? manage\.py (?:migrate|makemigrations)|gh auth login|crontab|useradd|usermod|sysctl -w|ufw|iptables|mkdir|/etc/init\.d/\S+ (?:restart|start|stop|reload|enable|disable))\b`)

// SystemChanges returns the commands within cmd that change the machine
// (see systemChangeRE), e.g. "brew install", "systemctl restart".
func SystemChanges(cmd string) []string {
	var out []string
	for _, m := range systemChangeRE.FindAllStringSubmatchIndex(cmd, -1) {
		verb := cmd[m[2]:m[3]]
		if scratchOnly(cmd[m[3]:]) {
			continue
		}
		out = append(out, verb)
	}
	return out
}

// scratchOnly reports whether the arguments up to the end of the command
// (the next ;, & or | or line end) that look like paths are all scratch
// paths, and there is at least one.
func scratchOnly(rest string) bool {
	if i := strings.IndexAny(rest, ";&|\n"); i >= 0 {
		rest = rest[:i]
	}
	n := 0
	for _, a := range strings.Fields(rest) {
		if strings.HasPrefix(a, "-") {
			continue
		}
		if !IsScratchPath(a) {
			return false
		}
		n++
	}
	return n > 0
}

// EditedFiles returns the paths of the turn's successful edit-tool calls
// (Edit, Write, apply_patch...), scratch paths left out: the "any turn with
// a successful edit" baseline.
func EditedFiles(t *transcript.Turn) []string {
	var out []string
	for _, p := range ChangedFiles(t) {
		if !strings.HasPrefix(p, "$ ") && !strings.Contains(p, " (by command)") {
			out = append(out, p)
		}
	}
	return out
}

// ChangedFiles returns what the turn changed, in order, without
// duplicates: the paths of successful edit-tool calls, the files successful
// shell commands wrote ("PATH (by command)") and the machine-changing
// commands they ran ("$ brew install"), leaving out scratch paths under a
// temporary directory.
func ChangedFiles(t *transcript.Turn) []string {
	files, _ := changes(t)
	return files
}

// changes returns ChangedFiles and whether, after the turn's first
// successful change, a shell command that changes nothing itself ran
// successfully: a test, build, run of the program, request or listing
// that looks at the result (the checked condition).
func changes(t *transcript.Turn) (files []string, checked bool) {
	ok := make(map[string]bool, len(t.ToolResults))
	for _, r := range t.ToolResults {
		if r.Success {
			ok[r.ID] = true
		}
	}
	var seen map[string]bool
	add := func(p string) bool {
		if p == "" || IsScratchPath(strings.TrimPrefix(p, "$ ")) {
			return false
		}
		if seen == nil {
			seen = map[string]bool{}
		}
		if !seen[p] {
			seen[p] = true
			files = append(files, p)
		}
		return true
	}
	changed := false
	for i := range t.ToolCalls {
		c := &t.ToolCalls[i]
		if !ok[c.ID] {
			continue
		}
		this := false
		switch {
		case c.ToolKind() == transcript.ToolModify:
			if c.Path != "" {
				this = add(c.Path)
			} else {
				for _, m := range patchFileRE.FindAllStringSubmatch(c.Input, -1) {
					this = add(strings.TrimSpace(m[1])) || this
				}
			}
		case c.Command != "":
			for _, p := range CommandWrites(c.Command) {
				this = add(p+" (by command)") || this
			}
			for _, s := range SystemChanges(c.Command) {
				this = add("$ "+s) || this
			}
			if !this && changed {
				checked = true
			}
		}
		changed = changed || this
	}
	return files, checked
}

// Git milestone kinds that the git condition recognises in successful tool
// results.
const (
	GitCommit = "commit"
	GitPush   = "push"
	GitPR     = "pr"
	GitMerge  = "merge"
)

// GitKinds lists the git milestone kinds.
var GitKinds = []string{GitCommit, GitPush, GitPR, GitMerge}

var gitRE = map[string]*lazyRegexp{
	// `[main 1a2b3c4] message`, `[feature/x (root-commit) 1a2b3c4] message`
	GitCommit: lazyRE(`(?m)^\[[^\]\s]+(?: \([a-z-]+\))? [0-9a-f]{7,40}\] \S`),
	// `   1a2b3c4..5d6e7f8  main -> main`, `* [new branch]      x -> x`
	GitPush: lazyRE(`(?m)^\s*(?:\+?\s*[0-9a-f]{7,40}\.\.\.?[0-9a-f]{7,40}|\* \[new (?:branch|tag)\])\s+\S+\s+->\s+\S+`),
	// a pull or merge request URL in a command's output
	GitPR: lazyRE(`https://(?:github\.com/[\w.-]+/[\w.-]+/pull|gitlab\.[\w.]+/[\w./-]+/-/merge_requests)/\d+`),
	// a fast-forward merge or pull: `Fast-forward` on a line of its own
	GitMerge: lazyRE(`(?m)^Fast-forward$`),
}

// gitLiteral is text each milestone's output must hold (a cheap test
// before the regex).
var gitLiteral = map[string]string{GitCommit: "] ", GitPush: " -> ", GitPR: "https://", GitMerge: "Fast-forward"}

// GitMilestones returns the git milestone kinds (GitKinds order) that some
// successful tool result of the turn shows.
func GitMilestones(t *transcript.Turn) []string {
	var out []string
	for _, k := range GitKinds {
		for _, r := range t.ToolResults {
			if r.Success && strings.Contains(r.Output, gitLiteral[k]) && gitRE[k].MatchString(r.Output) {
				out = append(out, k)
				break
			}
		}
	}
	return out
}

// FailThenPass reports whether a shell command of the turn failed and a
// later command of the same program (its first two words, after any `cd
// DIR &&`) succeeded in the same turn.
func FailThenPass(t *transcript.Turn) bool {
	cmds := map[string]string{}
	for _, c := range t.ToolCalls {
		if c.Command != "" {
			cmds[c.ID] = commandKey(c.Command)
		}
	}
	failed := map[string]bool{}
	for _, r := range t.ToolResults {
		k, ok := cmds[r.ID]
		if !ok || k == "" {
			continue
		}
		if !r.Success {
			failed[k] = true
		} else if failed[k] {
			return true
		}
	}
	return false
}

// commandKey is a command's program and first argument, after a leading
// `cd DIR &&` and environment assignments.
func commandKey(cmd string) string {
	cmd = strings.TrimSpace(cmd)
	for {
		if strings.HasPrefix(cmd, "cd ") {
			if i := strings.Index(cmd, "&&"); i >= 0 {
				cmd = strings.TrimSpace(cmd[i+2:])
				continue
			}
		}
		break
	}
	f := strings.Fields(cmd)
	for len(f) > 0 && strings.Contains(f[0], "=") {
		f = f[1:]
	}
	if len(f) > 2 {
		f = f[:2]
	}
	return strings.Join(f, " ")
}

// FixedInTurn reports whether a shell command of the turn failed, the turn
// then changed something (a successful edit, a file a command wrote, a
// machine-changing command; scratch paths left out) and a later command of
// the same program and first argument passed: a failure fixed and the fix
// confirmed within one turn. Unlike FailThenPass, a retry with nothing
// changed in between (a probe run again with other flags) does not count.
func FixedInTurn(t *transcript.Turn) bool {
	// ok[id] is whether the call's result succeeded; calls without a
	// result are skipped.
	ok := make(map[string]bool, len(t.ToolResults))
	for _, r := range t.ToolResults {
		ok[r.ID] = r.Success
	}
	// failedAt[key] is the number of changes seen when the key first failed.
	failedAt := map[string]int{}
	changesSeen := 0
	for i := range t.ToolCalls {
		c := &t.ToolCalls[i]
		success, answered := ok[c.ID]
		if !answered {
			continue
		}
		key := ""
		if c.Command != "" {
			key = commandKey(c.Command)
		}
		if !success {
			if _, seen := failedAt[key]; key != "" && !seen {
				failedAt[key] = changesSeen
			}
			continue
		}
		if n, failed := failedAt[key]; key != "" && failed && changesSeen > n {
			return true
		}
		if callChanges(c) {
			changesSeen++
		}
	}
	return false
}

// callChanges reports whether a successful call changes something outside
// a temp dir (see ChangedFiles).
func callChanges(c *transcript.ToolCall) bool {
	if c.ToolKind() == transcript.ToolModify {
		if c.Path != "" {
			return !IsScratchPath(c.Path)
		}
		for _, m := range patchFileRE.FindAllStringSubmatch(c.Input, -1) {
			if !IsScratchPath(strings.TrimSpace(m[1])) {
				return true
			}
		}
		return false
	}
	if c.Command == "" {
		return false
	}
	for _, p := range CommandWrites(c.Command) {
		if !IsScratchPath(p) {
			return true
		}
	}
	return len(SystemChanges(c.Command)) > 0
}

// probePrograms only look at things; their failing (grep finding nothing,
// ls of a missing file) is no error of the work, so passes_again ignores
// them.
var probePrograms = map[string]bool{
	"ls": true, "cat": true, "grep": true, "rg": true, "egrep": true, "find": true, "head": true, "tail": true,
	"which": true, "echo": true, "printf": true, "test": true, "[": true, "pwd": true, "wc": true, "file": true,
	"stat": true, "type": true, "true": true, "false": true, "sleep": true, "ps": true, "pgrep": true, "lsof": true,
	"diff": true, "tree": true, "du": true, "df": true, "env": true, "printenv": true, "date": true, "whoami": true,
	"sed": true, "awk": true, "jq": true, "less": true, "more": true, "sort": true, "uniq": true, "cut": true, "fd": true,
}

// subcommandPrograms are named with their subcommand: a failing `git push`
// is not fixed by a passing `git status`.
var subcommandPrograms = map[string]bool{
	"git": true, "npm": true, "pnpm": true, "yarn": true, "bun": true, "npx": true, "go": true, "cargo": true,
	"docker": true, "kubectl": true, "uv": true, "pip": true, "pip3": true, "brew": true, "gh": true, "make": true,
	"systemctl": true, "apt": true, "apt-get": true, "dotnet": true, "mix": true, "poetry": true, "bundle": true,
	"python": true, "python3": true, "node": true, "deno": true, "swift": true, "gradle": true, "mvn": true,
}

// programKeys names the programs a shell command runs, for passes_again:
// comment lines, a leading `cd DIR &&`, environment assignments and
// wrappers (sudo, time, nohup, env) are skipped; a program is named by its
// base name, with its subcommand for multi-command tools (git push, npm
// test). ssh is named with the program it runs remotely ("ssh opkg"), and
// a successful ssh also as plain "ssh" (the connection works). A read-only
// probe (ls, grep, cat...) has no name, and a failure is not counted when
// the pipeline's last stage is a probe (grep finding nothing).
func programKeys(cmd string, success bool) []string {
	var kept []string
	for l := range strings.Lines(cmd) {
		if t := strings.TrimSpace(l); t != "" && !strings.HasPrefix(t, "#") {
			kept = append(kept, t)
		}
	}
	line := strings.Join(kept, " ")
	if !success {
		stages := strings.Split(strings.ReplaceAll(line, "||", "\x00"), "|")
		if len(stages) > 1 && programKey(strings.Fields(stages[len(stages)-1])) == "" {
			return nil
		}
	}
	f := strings.Fields(commandKeyHead(line))
	k := programKey(f)
	if k != "ssh" {
		if k == "" {
			return nil
		}
		return []string{k}
	}
	remote := ""
	if i := strings.IndexAny(line, `"'`); i >= 0 {
		remote = programKey(strings.Fields(strings.Trim(line[i:], `"' `)))
		if remote == "" && !success {
			return nil // a remote probe failing
		}
	}
	switch {
	case remote == "":
		return []string{"ssh"}
	case success:
		return []string{"ssh", "ssh " + remote}
	}
	return []string{"ssh " + remote}
}

// programKey names the program of a command's words (see programKeys), ""
// for a probe.
func programKey(f []string) string {
	for len(f) > 0 {
		switch w := f[0]; {
		case strings.Contains(w, "=") && !strings.HasPrefix(w, "-"),
			w == "sudo", w == "time", w == "nohup", w == "env", w == "command", w == "exec",
			strings.HasPrefix(w, "-") && len(f) > 1:
			f = f[1:]
			continue
		}
		break
	}
	if len(f) == 0 {
		return ""
	}
	prog := strings.Trim(f[0], `"'()`)
	if i := strings.LastIndexByte(prog, '/'); i >= 0 && i < len(prog)-1 {
		prog = prog[i+1:]
	}
	if probePrograms[prog] || prog == "" {
		return ""
	}
	if subcommandPrograms[prog] && len(f) > 1 && !strings.HasPrefix(f[1], "-") {
		return prog + " " + f[1]
	}
	return prog
}

// commandKeyHead drops leading `cd DIR &&` parts of a command.
func commandKeyHead(cmd string) string {
	cmd = strings.TrimSpace(cmd)
	for strings.HasPrefix(cmd, "cd ") {
		i := strings.Index(cmd, "&&")
		if i < 0 {
			break
		}
		cmd = strings.TrimSpace(cmd[i+2:])
	}
	return cmd
}

// PassesAgain returns the program (see programKeys) whose last run in the
// previous turn failed — a failure that turn left unresolved — and that
// runs successfully in this one: an earlier failure confirmed fixed now,
// whether the fix was made in this turn or outside the session by the user.
// It is "" when there is none. Read-only probes (ls, grep, cat...) are not
// counted.
func PassesAgain(prev, t *transcript.Turn) string {
	last := map[string]bool{} // program → its last run succeeded
	forEachRun(prev, func(k string, success bool) {
		if !success || k != "ssh" { // a later ssh connection fixes no remote command
			last[k] = success
		}
	})
	failed := false
	for _, ok := range last {
		failed = failed || !ok
	}
	if !failed {
		return ""
	}
	found := ""
	forEachRun(t, func(k string, success bool) {
		if ok, seen := last[k]; found == "" && success && seen && !ok {
			found = k
		}
	})
	return found
}

// forEachRun calls fn with the program keys of each shell command of the
// turn that has a result, in result order.
func forEachRun(t *transcript.Turn, fn func(key string, success bool)) {
	cmds := map[string]string{}
	for _, c := range t.ToolCalls {
		if c.Command != "" {
			cmds[c.ID] = c.Command
		}
	}
	for _, r := range t.ToolResults {
		if cmd, ok := cmds[r.ID]; ok {
			for _, k := range programKeys(cmd, r.Success) {
				fn(k, r.Success)
			}
		}
	}
}

// lookOnlyGit are git subcommands that only show the work.
var lookOnlyGit = map[string]bool{"git status": true, "git diff": true, "git log": true, "git show": true, "git branch": true, "git remote": true}

// Exercised reports whether, after the turn's first change (see
// ChangedFiles), a successful shell command ran that exercises it: one that
// changes nothing itself and is no read-only look (ls, cat, grep, git
// status/diff/log...; see programKeys). Reading an edited file back does
// not verify it; a test, build, run of the program or a request does.
func Exercised(t *transcript.Turn) bool {
	ok := make(map[string]bool, len(t.ToolResults))
	for _, r := range t.ToolResults {
		if r.Success {
			ok[r.ID] = true
		}
	}
	changed := false
	for i := range t.ToolCalls {
		c := &t.ToolCalls[i]
		if !ok[c.ID] {
			continue
		}
		if callChanges(c) {
			changed = true
			continue
		}
		if !changed || c.Command == "" {
			continue
		}
		for _, k := range programKeys(c.Command, true) {
			if !lookOnlyGit[k] {
				return true
			}
		}
	}
	return false
}
