package loader

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"testing"
	"time"
)

// zigzag builds 2m+1 messages whose active branch (from message m) swings
// between both sides of a growing run of messages already on it: message
// m+t (t >= 0) has a parent that is not in the conversation, message m-t
// (t >= 1) has message m+t+1 as parent, so each missing parent's nearest
// earlier free message lies below the whole run walked so far.
func zigzag(m int) []caMessage {
	msgs := make([]caMessage, 2*m+1)
	for i := range msgs {
		msgs[i] = caMessage{uuid: "m" + strconv.Itoa(i), parent: "gone", hasParent: true, line: i + 1}
		if i < m {
			msgs[i].parent = "m" + strconv.Itoa(2*m-i+1)
		}
	}
	return msgs
}

// TestActiveBranchMissingParents checks how a branch with parents missing
// from the conversation is bridged: each to the nearest earlier message not
// already on the branch, every message used once, one problem per bridge.
func TestActiveBranchMissingParents(t *testing.T) {
	tests := []struct {
		name     string
		msgs     []caMessage
		leaf     string
		want     []int
		problems int
	}{
		// From m2: m2 (parent gone) -> m1 -> m4 (its parent) -> gone -> m3
		// -> gone -> m2, m1 taken -> m0 -> its parent m5 is gone, nothing
		// below: the conversation starts at m0.
		{"zigzag", zigzag(2), "m2", []int{0, 3, 4, 1, 2}, 4},
		{"chain", []caMessage{
			{uuid: "a", hasParent: true, parent: claudeRootParent},
			{uuid: "b", hasParent: true, parent: "x"},
			{uuid: "c", hasParent: true, parent: "b"},
		}, "c", []int{0, 1, 2}, 1},
		{"nothing below", []caMessage{
			{uuid: "a", hasParent: true, parent: "x"},
			{uuid: "b", hasParent: true, parent: "a"},
		}, "b", []int{0, 1}, 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			b := newBuilder("x.json", ClaudeAIFormat)
			got := activeBranch(b, tc.msgs, tc.leaf, "conversation 0")
			if !slices.Equal(got, tc.want) {
				t.Errorf("branch %v, want %v", got, tc.want)
			}
			if len(b.t.Problems) != tc.problems {
				t.Errorf("%d problems, want %d: %v", len(b.t.Problems), tc.problems, b.t.Problems)
			}
		})
	}
}

// TestActiveBranchLinear walks a zigzag branch of 200 001 messages.
// Scanning down for the nearest free message at each missing parent crosses
// the run walked so far every time: about m² = 10¹⁰ steps. The walk must
// cost about its length: it is timed against building the messages, which
// is linear, so that a loaded machine or the race detector slows both.
func TestActiveBranchLinear(t *testing.T) {
	const m = 100_000
	start := time.Now()
	msgs := zigzag(m)
	build := time.Since(start)
	b := newBuilder("x.json", ClaudeAIFormat)
	start = time.Now()
	got := activeBranch(b, msgs, "m"+strconv.Itoa(m), "conversation 0")
	walk := time.Since(start)
	if len(got) != len(msgs) {
		t.Fatalf("branch of %d messages, want all %d", len(got), len(msgs))
	}
	if walk > 10*build+time.Second {
		t.Errorf("walk took %v, building the messages %v: the search for the nearest free message is not linear", walk, build)
	}
	t.Logf("build %v, walk %v", build, walk)
}

// TestFreeBelow checks freeBelow against the set of free indices it stands
// for, after every take of a random order.
func TestFreeBelow(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, n := range []int{1, 2, 7, 100} {
		f := newFreeBelow(n)
		taken := make([]bool, n)
		for _, k := range r.Perm(n) {
			f.take(k)
			taken[k] = true
			for q := 0; q < 5; q++ {
				i := r.IntN(n+1) - 1 // -1 .. n-1
				want := -1
				for j := i; j >= 0; j-- {
					if !taken[j] {
						want = j
						break
					}
				}
				if got := f.at(i); got != want {
					t.Fatalf("n %d, taken %v: at(%d) = %d, want %d", n, fmt.Sprint(taken), i, got, want)
				}
			}
		}
	}
}
