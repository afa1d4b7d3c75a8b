// Command ringactor runs, demonstrates and measures ringactor's ring kernels:
// persistent compute loops, each owned by a supervised Proto.Actor actor and
// fed by a lock-free message ring.
//
// Usage:
//
//	ringactor <command> [flags]
//	ringactor help [command]
//
// The commands are:
//
//	demo   launch ring kernels in one runtime (vector_add, a stateful
//	       running_sum, and a two-stage kernel-to-kernel chain scale →
//	       square_sum), send them work, print the results and each kernel's
//	       telemetry. -n sets how many vector_add messages the throughput
//	       part sends (default 1000); -v logs at debug level.
//	bench  measure a sequential Request round trip and pipelined throughput
//	       through one ring kernel against a bare Proto.Actor request and a
//	       Go channel in the same process. -quick runs the short
//	       configuration (under a minute on two cores), -json prints the
//	       result as one JSON object on stdout and nothing else. It also
//	       measures the compute path: Runtime.Execute's overhead over a
//	       direct call of the same CPU kernel, tiny executions per second,
//	       a 10M-element add against a copy and a 1024×1024 matmul against
//	       gonum's Gemm.
//	kernels
//	       list the registered compute kernels: inputs, scalars and their
//	       defaults, dtypes, the backends that implement them, whether they
//	       are elementwise, a description. -json prints one JSON array.
//	devices
//	       list the backends of this machine: the CPU, CUDA devices or the
//	       exact reason none is usable, NVML's state. -json for JSON.
//	pagerank
//	       PageRank of an edge list (--edges FILE; default an embedded
//	       graph) on partition ring kernels: node<TAB>rank, highest first.
//	pipeline
//	       stream sensor CSV (FILE or -) through parse → scale → window →
//	       sink ring kernels and print per-window statistics as CSV.
//	serve  run a cluster member hosting the built-in kinds (echo, add)
//	       until SIGINT or SIGTERM: --cluster NAME, --bind HOST:PORT,
//	       --peers HOST:PORT,... or --etcd ENDPOINTS, optional mutual TLS
//	       (--tls-ca, --tls-cert, --tls-key).
//	call   send one JSON request to a cluster identity as a client and
//	       print the JSON reply: --kind, --identity, --json, --timeout.
//	help   print the usage, or a command's usage and flags.
//
// Flags follow the standard library's flag package: -name and --name are the
// same, and each command has its own flags after its name.
//
// Help: "ringactor help", "ringactor -h", "ringactor --help",
// "ringactor help <command>" and "ringactor <command> -h" print the usage on
// stderr and exit 0. Running ringactor with no command prints the usage on
// stderr and exits 2, as does an unknown command.
//
// Exit status: 0 on success, 1 on a runtime failure (including an interrupt
// by SIGINT or SIGTERM, which cancels the running command), 2 on a usage
// error (unknown command, bad flag, unexpected argument). Results go to
// stdout; usage text and logs (log/slog, text format) go to stderr.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"slices"
	"strings"
	"syscall"
)

// Exit statuses of the command.
const (
	exitOK      = 0 // success, and every help request
	exitFailure = 1 // the command ran and failed (or was interrupted)
	exitUsage   = 2 // the command line was wrong
)

// command is one subcommand of ringactor. Adding a subcommand is one entry
// in commands.
type command struct {
	// name is what the user types; it equals the command's key in commands.
	name string
	// summary is the one-line description in the top-level usage.
	summary string
	// run parses args (the arguments after the command's name) and runs the
	// command, writing results to stdout and usage and logs to stderr. It
	// returns the process's exit status.
	run func(ctx context.Context, args []string, stdout, stderr io.Writer) int
}

// commands is the registry of subcommands by name. "help" is handled by
// dispatch itself, since it reads this table.
var commands = map[string]command{
	demoCommand.name:     demoCommand,
	benchCommand.name:    benchCommand,
	kernelsCommand.name:  kernelsCommand,
	devicesCommand.name:  devicesCommand,
	pagerankCommand.name: pagerankCommand,
	pipelineCommand.name: pipelineCommand,
	serveCommand.name:    serveCommand,
	callCommand.name:     callCommand,
}

// main runs the command line under a context that SIGINT and SIGTERM cancel,
// and exits with its status.
func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// run dispatches args (without the program name) to a subcommand and returns
// the exit status.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		printUsage(stderr)
		return exitUsage
	}
	name, rest := args[0], args[1:]
	switch name {
	case "help", "-h", "-help", "--help":
		if name == "help" && len(rest) > 0 {
			if len(rest) > 1 {
				fmt.Fprintf(stderr, "ringactor help: want at most one command, got %q\n\n", rest)
				printUsage(stderr)
				return exitUsage
			}
			cmd, ok := commands[rest[0]]
			if !ok {
				fmt.Fprintf(stderr, "ringactor help: unknown command %q\n\n", rest[0])
				printUsage(stderr)
				return exitUsage
			}
			return cmd.run(ctx, []string{"-h"}, stdout, stderr)
		}
		printUsage(stderr)
		return exitOK
	}
	cmd, ok := commands[name]
	if !ok {
		fmt.Fprintf(stderr, "ringactor: unknown command %q\n\n", name)
		printUsage(stderr)
		return exitUsage
	}
	return cmd.run(ctx, rest, stdout, stderr)
}

// printUsage writes the top-level help: synopsis, commands, help and exit
// status conventions.
func printUsage(w io.Writer) {
	names := make([]string, 0, len(commands))
	width := len("help")
	for name := range commands {
		names = append(names, name)
		width = max(width, len(name))
	}
	slices.Sort(names)
	var b strings.Builder
	b.WriteString(`ringactor runs GPU ring kernels as supervised Proto.Actor actors.

Usage:
  ringactor <command> [flags]
  ringactor help [command]

Commands:
`)
	for _, name := range names {
		fmt.Fprintf(&b, "  %-*s  %s\n", width, name, commands[name].summary)
	}
	fmt.Fprintf(&b, "  %-*s  %s\n", width, "help", "print this help, or a command's usage and flags")
	b.WriteString(`
Run 'ringactor <command> -h' for a command's flags; -name and --name are the
same flag. Results go to stdout; usage and logs go to stderr.

Help (-h, -help, --help, help) exits 0. Exit status otherwise: 0 success,
1 runtime failure or interrupt (SIGINT, SIGTERM), 2 usage error (no or
unknown command, bad flag, unexpected argument).
`)
	_, _ = io.WriteString(w, b.String())
}

// newFlagSet returns the flag set of the command called name: errors are
// returned, not fatal, and its usage (synopsis, description, flags) goes to
// stderr. synopsis is what follows the name, e.g. "[-n N]".
func newFlagSet(name, synopsis, description string, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet("ringactor "+name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintf(stderr, "Usage: ringactor %s %s\n\n%s\nFlags:\n", name, synopsis, description)
		fs.PrintDefaults()
	}
	return fs
}

// parseFlags parses args into fs and accepts no positional arguments. It
// returns ok when the command should run; otherwise code is the exit status:
// exitOK for -h, exitUsage for a bad command line (the flag package has
// already reported it).
func parseFlags(fs *flag.FlagSet, args []string) (code int, ok bool) {
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return exitOK, false
		}
		return exitUsage, false
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(fs.Output(), "%s: unexpected argument %q\n", fs.Name(), fs.Arg(0))
		fs.Usage()
		return exitUsage, false
	}
	return exitOK, true
}

// usageError reports a flag value that parsed but is out of range, prints
// the command's usage and returns exitUsage.
func usageError(fs *flag.FlagSet, format string, args ...any) int {
	fmt.Fprintf(fs.Output(), "%s: %s\n", fs.Name(), fmt.Sprintf(format, args...))
	fs.Usage()
	return exitUsage
}

// newLogger returns the command's logger: text to stderr at info level, or
// debug level when verbose. The runtime passes it to Proto.Actor, which it
// keeps at warn level unless the logger is at debug level.
func newLogger(stderr io.Writer, verbose bool) *slog.Logger {
	level := slog.LevelInfo
	if verbose {
		level = slog.LevelDebug
	}
	return slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: level}))
}

// failure logs err as the command's failure and returns exitFailure.
func failure(log *slog.Logger, cmd string, err error) int {
	if errors.Is(err, context.Canceled) {
		log.Error(cmd+" interrupted", "err", err)
	} else {
		log.Error(cmd+" failed", "err", err)
	}
	return exitFailure
}
