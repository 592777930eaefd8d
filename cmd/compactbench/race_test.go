//go:build race

package main

import "time"

// stopWithin is how soon a cancelled run must stop: the race detector
// slows the replay loops several times over.
const stopWithin = 3 * time.Second

// raceBuild is whether the race detector is on (heavy tests do less).
const raceBuild = true
