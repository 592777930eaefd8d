//go:build unix

package testutil

import (
	"syscall"
	"time"
)

// CPUTime is the process's user + system CPU time so far. Benchmarks report
// it because wall time on a shared machine swings with other load.
func CPUTime() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
