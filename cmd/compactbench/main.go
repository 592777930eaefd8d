// Command compactbench replays recorded LLM coding-agent sessions through
// context-compaction strategies and measures what each would have done.
//
// Run `compactbench --help` for the commands. main only hands the process's
// arguments and streams to Main, so every command is testable in-process.
package main

import "os"

func main() {
	os.Exit(Main(os.Args, os.Stdout, os.Stderr))
}
