package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime/debug"
	"strings"
	"sync"
	"syscall"

	"github.com/urfave/cli/v2"

	"github.com/compactbench/compactbench/internal/exitcode"
)

// version is set at build time with -ldflags "-X main.version=...".
var version = "dev"

// Exit codes (exitcode's, as ints for os.Exit).
const (
	exitOK       = int(exitcode.OK)
	exitFailed   = int(exitcode.Failed)   // the command ran and found a failure (--strict problems, a gate regression)
	exitBadInput = int(exitcode.Usage)    // usage errors and unusable input
	exitInternal = int(exitcode.Internal) // a bug: a panic outside the work on one input file
	// A run stopped by a signal exits 128 + the signal's number: 130 for
	// SIGINT, 143 for SIGTERM.
	exitSignal = int(exitcode.Signal)
)

// usageErr reports bad arguments or unusable input (exit 2).
func usageErr(format string, args ...any) error { return exitcode.Usagef(format, args...) }

// failErr reports a failure the command found (exit 1).
func failErr(format string, args ...any) error { return exitcode.Failf(format, args...) }

// commands builds the app's subcommands, in the order --help lists them.
// They are built afresh for every app: urfave/cli keeps parse state on them.
func commands() []*cli.Command {
	return []*cli.Command{
		newAgreeCommand(),
		newCalibrateCommand(),
		newGateCommand(),
		newGenCommand(),
		newInspectCommand(),
		newMergeCommand(),
		newRulesCommand(),
		newRunCommand(),
		newStrategiesCommand(),
		newTuneCommand(),
	}
}

// newApp builds the CLI with its output streams.
func newApp(stdout, stderr io.Writer) *cli.App {
	cmds := commands()
	for _, c := range cmds {
		usageErrors(c)
	}
	return &cli.App{
		Name:    "compactbench",
		Usage:   "replay recorded agent sessions through context-compaction strategies and measure them",
		Version: version,
		Description: "compactbench loads recorded coding-agent transcripts (Claude Code JSONL first),\n" +
			"replays compaction strategies over them, and writes tables (CSV, Parquet),\n" +
			"summary.json and reports. Main job: compactbench run corpora/",
		Writer:               stdout,
		ErrWriter:            stderr,
		Commands:             cmds,
		EnableBashCompletion: true,
		HideHelpCommand:      true,
		// Errors are printed once, by Main.
		ExitErrHandler: func(*cli.Context, error) {},
		Action: func(c *cli.Context) error {
			if c.Args().Present() {
				return usageErr("unknown command %q (compactbench --help lists them)", c.Args().First())
			}
			return cli.ShowAppHelp(c)
		},
		OnUsageError: func(c *cli.Context, err error, _ bool) error {
			return usageErr("%v", err)
		},
	}
}

// usageErrors makes flag parsing errors of cmd and its subcommands usage
// errors (exit 2), typed rather than recognised by their text.
func usageErrors(cmd *cli.Command) {
	cmd.OnUsageError = func(_ *cli.Context, err error, _ bool) error {
		return usageErr("%s: %v", cmd.Name, err)
	}
	for _, s := range cmd.Subcommands {
		usageErrors(s)
	}
}

// signalCause is the cause of a run cancelled by a signal.
type signalCause struct{ sig syscall.Signal }

func (s signalCause) Error() string { return "interrupted (" + s.sig.String() + ")" }

// Main runs the CLI with args (args[0] is the program name) and returns the
// process exit code. SIGINT and SIGTERM cancel the run's context: the
// command stops, removes what it had started writing, leaves the previous
// outputs as they were, and Main returns 130 or 143. A second signal exits
// at once.
func Main(args []string, stdout, stderr io.Writer) int {
	ctx, cancel := context.WithCancelCause(context.Background())
	defer cancel(nil)
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(sigs)
	go func() {
		select {
		case s := <-sigs:
			sig, _ := s.(syscall.Signal)
			cancel(signalCause{sig})
		case <-ctx.Done():
			return
		}
		if s, ok := (<-sigs).(syscall.Signal); ok {
			os.Exit(exitSignal + int(s))
		}
	}()
	return MainContext(ctx, args, stdout, stderr)
}

// MainContext is Main under a context: cancelling it stops the command as
// a signal does (exit 130, or 128 + the signal when the cause is a
// signalCause). A panic is an internal error (exit 3).
func MainContext(ctx context.Context, args []string, stdout, stderr io.Writer) (code int) {
	defer func() {
		if p := recover(); p != nil {
			fmt.Fprintf(stderr, "compactbench: internal error: %v\n%s\ncompactbench: this is a bug; please report it with the command line and the input if you can share it\n", p, debug.Stack())
			code = exitInternal
		}
	}()
	app := newApp(stdout, stderr)
	err := app.RunContext(ctx, permuteFlags(app, args))
	if err == nil {
		return exitOK
	}
	if ctx.Err() != nil && errors.Is(err, context.Canceled) {
		cause := context.Cause(ctx)
		fmt.Fprintf(stderr, "compactbench: %v; stopped, earlier outputs left as they were\n", cause)
		var sc signalCause
		if errors.As(cause, &sc) {
			return exitSignal + int(sc.sig)
		}
		return exitSignal + int(syscall.SIGINT)
	}
	fmt.Fprintf(stderr, "compactbench: %v\n", err)
	return int(exitcode.Of(err))
}

// lockedWriter serialises writes from concurrent workers.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// hasSubcommands reports whether cmd has subcommands of its own (urfave/cli
// appends a "help" subcommand to every command it runs, so a second Main in
// one process would otherwise see one).
func hasSubcommands(cmd *cli.Command) bool {
	for _, s := range cmd.Subcommands {
		if s.Name != "help" {
			return true
		}
	}
	return false
}

// permuteFlags moves a subcommand's flags ahead of its positional arguments,
// so `compactbench run corpora/ -j 4` works as well as `run -j 4 corpora/`
// (urfave/cli stops parsing flags at the first positional argument). A "--"
// ends the permutation.
func permuteFlags(app *cli.App, args []string) []string {
	if len(args) < 2 {
		return args
	}
	var cmd *cli.Command
	for _, c := range app.Commands {
		if c.HasName(args[1]) {
			cmd = c
		}
	}
	if cmd == nil || hasSubcommands(cmd) || cmd.SkipFlagParsing {
		return args
	}
	takesValue := map[string]bool{}
	for _, f := range cmd.Flags {
		_, isBool := f.(*cli.BoolFlag)
		for _, n := range f.Names() {
			takesValue[n] = !isBool
		}
	}
	var flags, pos []string
	rest := args[2:]
	for i := 0; i < len(rest); i++ {
		a := rest[i]
		if a == "--" {
			pos = append(pos, rest[i+1:]...)
			break
		}
		if len(a) > 1 && a[0] == '-' {
			flags = append(flags, a)
			name := strings.TrimLeft(a, "-")
			if !strings.Contains(name, "=") && takesValue[name] && i+1 < len(rest) {
				i++
				flags = append(flags, rest[i])
			}
			continue
		}
		pos = append(pos, a)
	}
	out := append([]string{args[0], args[1]}, flags...)
	if len(pos) > 0 {
		out = append(out, "--")
		out = append(out, pos...)
	}
	return out
}
