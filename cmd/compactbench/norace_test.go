//go:build !race

package main

import "time"

// stopWithin is how soon a cancelled run must stop.
const stopWithin = time.Second

// raceBuild is whether the race detector is on (heavy tests do less).
const raceBuild = false
