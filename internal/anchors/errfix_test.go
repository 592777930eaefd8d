package anchors

import (
	"strings"
	"testing"
)

// The shapes below are taken from real sessions that readers marked
// error-resolution (commands and outputs shortened, hosts and names
// changed).

func TestFixedInTurn(t *testing.T) {
	cases := []struct {
		name string
		b    *tb
		want bool
	}{
		{"dns query times out, firewall rule changed, query answers", turn("troubleshoot network").
			run("Bash", "dig example.com @10.0.0.1 +short", false, ";; connection timed out; no servers could be reached").
			run("Bash", `ssh root@10.0.0.1 "uci set firewall.drop_dns.enabled='0' && uci commit firewall"`, true, "").
			run("Bash", "dig example.com @10.0.0.1 +short", true, "93.184.216.34"), true},
		{"test fails, file edited, test passes", turn("fix").
			run("Bash", "cd web && npm test", false, "1 failed").
			run("Edit", "/src/a.js", true, "ok").
			run("Bash", "npm test", true, "all passed"), true},
		{"retried with other flags, nothing changed", turn("look").
			run("Bash", "dig example.com @10.0.0.1", false, "timed out").
			run("Bash", "dig example.com @10.0.0.1 +tcp", true, "93.184.216.34"), false},
		{"change made before the failure", turn("x").
			run("Edit", "/src/a.js", true, "ok").
			run("Bash", "go test ./...", false, "FAIL").
			run("Bash", "go test ./...", true, "ok"), false},
		{"scratch edit is no fix", turn("x").
			run("Bash", "go test ./...", false, "FAIL").
			run("Write", "/tmp/notes.txt", true, "ok").
			run("Bash", "go test ./...", true, "ok"), false},
	}
	for _, c := range cases {
		if got := FixedInTurn(&c.b.t); got != c.want {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
}

func TestPassesAgain(t *testing.T) {
	cases := []struct {
		name       string
		prev, this *tb
		want       string
	}{
		{"sudo needed a password; the user ran it; the check passes", turn("do next steps").
			run("Bash", "sudo /usr/libexec/ApplicationFirewall/socketfilterfw --setstealthmode on", false, "sudo: a password is required"),
			turn("sudo /usr/libexec/ApplicationFirewall/socketfilterfw --setstealthmode on").
				run("Bash", "/usr/libexec/ApplicationFirewall/socketfilterfw --getstealthmode", true, "Firewall stealth mode is on"),
			"socketfilterfw"},
		{"install failed offline; network back; install passes", turn("install the tool").
			run("Bash", "# global install\nbun install -g sometool", false, "error: ConnectionRefused"),
			turn("internet connection restored, resume").
				run("Bash", "bun install -g sometool", true, "installed sometool"),
			"bun install"},
		{"host name did not resolve; by address it works", turn("ssh into the router").
			run("Bash", "ssh router", false, "ssh: Could not resolve hostname router"),
			turn("try 10.0.0.1").
				run("Bash", `ssh root@10.0.0.1 "uname -a"`, true, "Linux router"),
			"ssh"},
		{"failure fixed within the previous turn", turn("x").
			run("Bash", "npm test", false, "1 failed").
			run("Bash", "npm test", true, "ok"),
			turn("next task").run("Bash", "npm test", true, "ok"), ""},
		{"grep finding nothing is no failure", turn("x").
			run("Bash", "opkg list-installed | grep cloud", false, ""),
			turn("y").run("Bash", "opkg list-installed", true, "base-files"), ""},
		{"remote probe failing over ssh is no failure", turn("x").
			run("Bash", `ssh root@10.0.0.1 "ls /etc/init.d/cloud"`, false, "No such file"),
			turn("y").run("Bash", `ssh root@10.0.0.1 "ls /etc"`, true, "config"), ""},
		{"a remote command's success in the same turn does not clear a failed connection", turn("ssh into the router").
			run("Bash", "ssh router", false, "ssh: Could not resolve hostname router").
			run("Bash", `ssh -o ConnectTimeout=5 root@router "uname -a"`, true, "Command running in background"),
			turn("try 10.0.0.1").run("Bash", `ssh root@10.0.0.1 "uname -a"`, true, "Linux router"), "ssh"},
		{"another subcommand does not confirm the fix", turn("x").
			run("Bash", "git push", false, "rejected"),
			turn("y").run("Bash", "git status", true, "clean"), ""},
	}
	for _, c := range cases {
		if got := PassesAgain(&c.prev.t, &c.this.t); got != c.want {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
	}
}

// TestExplainErrorConditions: fixed_in_turn and passes_again are rule
// conditions that --explain shows with what they found, and passes_again
// looks only at the previous turn (never the next).
func TestExplainErrorConditions(t *testing.T) {
	set, err := Parse([]byte(`
name: x
threshold: 0.5
rules:
  - name: again
    type: error-resolution
    weight: 0.9
    confidence: 0.9
    when:
      - passes_again: true
      - response: {says: [done, success]}
  - name: fixed
    type: error-resolution
    weight: 0.9
    confidence: 0.9
    when:
      - fixed_in_turn: true
`), "x.yaml")
	if err != nil {
		t.Fatal(err)
	}
	ts := turns(
		turn("install it").run("Bash", "bun install -g sometool", false, "error: ConnectionRefused"),
		turn("internet connection restored, resume").run("Bash", "bun install -g sometool", true, "installed").say("Installed successfully."),
		turn("thanks").run("Bash", "sometool --version", true, "0.2.0"),
	)
	got := set.Predict(ts)
	if got[0] != "" || got[1] != ErrorResolution || got[2] != "" {
		t.Errorf("predicted %v", got)
	}
	ex := set.Explain(ts, 1)[0]
	if !ex.Fired || ex.Conds[0].Text != "passes_again: true" || !strings.Contains(ex.Conds[0].Detail, "bun install") {
		t.Errorf("explain: %+v", ex)
	}
	if ex := set.Explain(ts, 1)[1]; ex.Matched || ex.Conds[0].Text != "fixed_in_turn: true" || !strings.Contains(ex.Conds[0].Detail, "false") {
		t.Errorf("explain fixed_in_turn: %+v", ex)
	}
	if ex := set.Explain(ts, 0)[0]; ex.Matched {
		t.Errorf("turn 0 has no previous turn: %+v", ex)
	}
}

func TestExercised(t *testing.T) {
	cases := []struct {
		name string
		b    *tb
		want bool
	}{
		{"edit then build", turn("x").run("Edit", "/src/a.go", true, "ok").run("Bash", "go build ./...", true, ""), true},
		{"edit then request", turn("x").run("Edit", "/srv/app.py", true, "ok").run("Bash", "curl -s localhost:8000/health", true, "ok"), true},
		{"edit read back with grep", turn("x").run("Edit", "/srv/admin.py", true, "ok").run("Bash", `grep -n "list_filter" /srv/admin.py`, true, "89: list_filter"), false},
		{"edit then git diff", turn("x").run("Edit", "/srv/a.js", true, "ok").run("Bash", "git diff", true, "+x"), false},
		{"test before the change", turn("x").run("Bash", "npm test", true, "ok").run("Edit", "/src/a.js", true, "ok"), false},
		{"failed build", turn("x").run("Edit", "/src/a.go", true, "ok").run("Bash", "go build ./...", false, "error"), false},
	}
	for _, c := range cases {
		if got := Exercised(&c.b.t); got != c.want {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
}
