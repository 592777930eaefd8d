package main

import (
	"strings"
	"testing"
)

func TestInspectDigest(t *testing.T) {
	code, out, errOut := runCLI(t, "inspect", "--digest", "../../corpora/seeds/000-ex1-auth-bug.jsonl")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	for _, want := range []string{
		"── turn 1  uuid 016e8ca3-7424-5442-9094-30efea0b2a25  at 2025-11-18T09:12:39.000Z",
		"  prompt: Yes, go ahead with that fix.",
		"  changed: /home/dev/authsvc/src/auth.rs",
		"  ✓ $ cargo test  → test result: ok. 6 passed",
		"    | Fixed. `verify_password`",
		"  next prompt: Great. Please also update",
		"  next prompt: (none: last turn)",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("digest lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "codelet") || strings.Contains(out, "FIRES") {
		t.Errorf("the digest must show no rule output:\n%s", out)
	}
	code, _, _ = runCLI(t, "inspect", "--digest", "--turn", "9", "../../corpora/seeds/000-ex1-auth-bug.jsonl")
	if code != 2 {
		t.Errorf("--turn out of range: exit %d, want 2", code)
	}
}
