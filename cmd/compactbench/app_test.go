package main

import (
	"slices"
	"testing"
)

// TestCommandsListedInOrder: commands are assembled in one explicit list
// (no init registration), in the order --help shows them.
func TestCommandsListedInOrder(t *testing.T) {
	var names []string
	for _, c := range commands() {
		names = append(names, c.Name)
	}
	if !slices.IsSorted(names) {
		t.Errorf("commands() is not in name order: %v", names)
	}
	if len(names) != 10 {
		t.Errorf("%d commands, want 10: %v", len(names), names)
	}
}
