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
//	       PageRank of an edge list (FILE, --edges FILE, - for stdin;
//	       default an embedded graph) on partition ring kernels:
//	       node<TAB>rank, highest first.
//	pipeline
//	       stream sensor CSV (FILE or -) through parse → scale → window →
//	       sink ring kernels and print per-window statistics as CSV;
//	       --max-rejects N stops after more than N rejected rows.
//	serve  run a cluster member hosting the built-in kinds (echo, add, counter, devscale)
//	       until SIGINT or SIGTERM: --cluster NAME, --bind HOST:PORT,
//	       --peers HOST:PORT,... or --etcd ENDPOINTS, optional mutual TLS
//	       (--tls-ca, --tls-cert, --tls-key); --admin ADDR serves
//	       /metrics, /healthz, /readyz, /kernels (--pprof adds
//	       /debug/pprof); OTEL_* configures metric and trace export.
//	call   send one JSON request to a cluster identity as a client and
//	       print the JSON reply: --kind, --identity, --data, --timeout
//	       (--json, the old name of --data, is deprecated).
//	top    live view of a member's ring kernels from its admin endpoint
//	       (--admin ADDR): state, placement, processed/s, errors,
//	       dropped, depth, p50/p99 latency, restarts, redrawn in place;
//	       --once --json for scripts.
//	selftest
//	       verify the GPU path step by step, each step in a child process
//	       with its own timeout (a hang is killed and its stacks reported):
//	       --device (device 0) or --device=sim, --quick, --only STEP,...,
//	       --json FILE. Exits 3 when there is no usable CUDA device.
//	version
//	       print the release (CHANGELOG.md's latest), the module version
//	       ("(devel)" for a work tree build) and the Go version;
//	       "ringactor --version" is the same.
//	help   print the usage, or a command's usage and flags.
//
// Every command takes --log-level (debug, info, warn, error) and
// --log-format (text, json) for its logs on stderr.
//
// Flags follow the standard library's flag package: -name and --name are the
// same, and each command has its own flags after its name.
//
// Help: "ringactor help", "ringactor -h", "ringactor --help",
// "ringactor help <command>" and "ringactor <command> -h" print the usage on
// stderr and exit 0. Running ringactor with no command prints a line saying
// so and the usage on stderr and exits 2.
//
// Errors are one plain line on stderr, "ringactor CMD: what went wrong". A
// usage mistake (unknown command or flag, bad flag value, unexpected
// argument) adds a one-line hint at the command's -h and exits 2; a failure
// at run time exits 1.
//
// Exit status: 0 on success, 1 on a runtime failure (including an interrupt
// by SIGINT or SIGTERM, which cancels the running command), 2 on a usage
// error (unknown command, bad flag, unexpected argument). Results go to
// stdout; errors, usage text and logs (log/slog, text format) go to stderr.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"github.com/ringactor/ringactor/cluster"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"runtime"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"unicode/utf8"

	"github.com/ringactor/ringactor/internal/version"
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
	topCommand.name:      topCommand,
	selftestCommand.name: selftestCommand,
	versionCommand.name:  versionCommand,
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
		fmt.Fprintln(stderr, "ringactor: no command")
		printUsage(stderr)
		return exitUsage
	}
	name, rest := args[0], args[1:]
	switch name {
	case "-version", "--version":
		if len(rest) > 0 {
			return topUsageError(stderr, "%s takes no arguments, got %q", name, rest)
		}
		fmt.Fprintln(stdout, versionString())
		return exitOK
	case "help", "-h", "-help", "--help":
		if name == "help" && len(rest) > 0 {
			if len(rest) > 1 {
				return topUsageError(stderr, "help: want at most one command, got %q", rest)
			}
			cmd, ok := commands[rest[0]]
			if rest[0] == "help" {
				printUsage(stderr)
				return exitOK
			}
			if !ok {
				return topUsageError(stderr, "help: unknown command %q", rest[0])
			}
			return cmd.run(ctx, []string{"-h"}, stdout, stderr)
		}
		printUsage(stderr)
		return exitOK
	}
	cmd, ok := commands[name]
	if !ok {
		if strings.HasPrefix(name, "-") {
			return topUsageError(stderr, "unknown flag %q (flags follow the command)", name)
		}
		return topUsageError(stderr, "unknown command %q", name)
	}
	return cmd.run(ctx, rest, stdout, stderr)
}

// topUsageError reports a usage mistake on the top-level command line: one
// line and a hint on stderr. It returns exitUsage.
func topUsageError(stderr io.Writer, format string, args ...any) int {
	fmt.Fprintf(stderr, "ringactor: %s\nRun 'ringactor help' for usage.\n", oneLine(fmt.Sprintf(format, args...)))
	return exitUsage
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

Help (-h, -help, --help, help) exits 0; --version prints the version.
Errors are one line on stderr. Exit status otherwise: 0 success, 1 runtime
failure or interrupt (SIGINT, SIGTERM), 2 usage error (no or unknown
command, bad flag, unexpected argument).
`)
	_, _ = io.WriteString(w, b.String())
}

// flagSet is a command's flag set: its flags, and where and how its usage
// and errors are written.
type flagSet struct {
	*flag.FlagSet
	// cmd is the command's name.
	cmd string
	// stderr receives usage and errors.
	stderr io.Writer
	// usage writes the command's usage (synopsis, description, flags) to
	// stderr.
	usage func()
	// log holds the --log-level and --log-format flags.
	log logFlags
	// env, when set, makes every flag not given on the command line take
	// the value of the environment variable env(flag name) where it is set
	// (fromEnv).
	env func(name string) string
	// lookupEnv reads a variable for fromEnv: os.LookupEnv when nil.
	lookupEnv func(key string) (string, bool)
}

// newFlagSet returns the flag set of the command called name. Parsing it
// writes nothing: parseFlags and parseInterspersed report a bad command line
// in one line, and print the usage only for -h. synopsis is what follows the
// name, e.g. "[-n N]".
func newFlagSet(name, synopsis, description string, stderr io.Writer) *flagSet {
	fs := &flagSet{FlagSet: flag.NewFlagSet("ringactor "+name, flag.ContinueOnError), cmd: name, stderr: stderr}
	fs.SetOutput(io.Discard)
	fs.log.define(fs)
	fs.Usage = func() {} // the flag package calls it on every error
	fs.usage = func() {
		fmt.Fprintf(stderr, "Usage: ringactor %s %s\n\n%s\nFlags:\n", name, synopsis, description)
		fs.SetOutput(stderr)
		fs.PrintDefaults()
		fs.SetOutput(io.Discard)
		if fs.env != nil {
			var names []string
			fs.VisitAll(func(f *flag.Flag) { names = append(names, fs.env(f.Name)) })
			fmt.Fprintf(stderr, "\nEnvironment (a flag on the command line wins over its variable):\n  %s\n",
				strings.Join(names, "\n  "))
		}
	}
	return fs
}

// envName is the environment variable of the flag name of a command that
// reads its flags from the environment too: RINGACTOR_ and the name in
// capitals, '-' as '_' (bench-kinds: RINGACTOR_BENCH_KINDS).
func envName(name string) string {
	return "RINGACTOR_" + strings.ToUpper(strings.ReplaceAll(name, "-", "_"))
}

// fromEnv sets every flag of fs that the command line did not give from
// its environment variable (fs.env), as twelve-factor deployments expect.
// A variable set to a value the flag refuses is a usage error naming the
// variable.
func (fs *flagSet) fromEnv() error {
	lookup := fs.lookupEnv
	if lookup == nil {
		lookup = os.LookupEnv
	}
	given := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { given[f.Name] = true })
	var err error
	fs.VisitAll(func(f *flag.Flag) {
		if err != nil || given[f.Name] {
			return
		}
		v, ok := lookup(fs.env(f.Name))
		if !ok {
			return
		}
		if e := fs.Set(f.Name, v); e != nil {
			err = fmt.Errorf("%s=%q: %w", fs.env(f.Name), v, e)
		}
	})
	return err
}

// parse parses args into fs. When ok is false the command must not run and
// code is its exit status: exitOK for -h (the usage is printed), exitUsage
// for a bad flag (reported).
func (fs *flagSet) parse(args []string) (code int, ok bool) {
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fs.usage()
			return exitOK, false
		}
		return usageError(fs, "%v", err), false
	}
	if fs.env != nil {
		if err := fs.fromEnv(); err != nil {
			return usageError(fs, "%v", err), false
		}
	}
	if err := fs.log.check(); err != nil {
		return usageError(fs, "%v", err), false
	}
	fs.Visit(func(f *flag.Flag) {
		if f.Name == "log-level" {
			fs.log.set = true
		}
	})
	return exitOK, true
}

// parseFlags parses args into fs and accepts no positional arguments. It
// returns ok when the command should run; otherwise code is the exit status:
// exitOK for -h, exitUsage for a bad command line (already reported).
func parseFlags(fs *flagSet, args []string) (code int, ok bool) {
	if code, ok := fs.parse(args); !ok {
		return code, false
	}
	if fs.NArg() > 0 {
		return usageError(fs, "unexpected argument %q", fs.Arg(0)), false
	}
	return exitOK, true
}

// usageError reports a mistake on the command line of fs's command in one
// line, "ringactor CMD: what is wrong", followed by a one-line hint at -h,
// and returns exitUsage.
func usageError(fs *flagSet, format string, args ...any) int {
	fmt.Fprintf(fs.stderr, "ringactor %s: %s\nRun 'ringactor %s -h' for usage.\n", fs.cmd, oneLine(fmt.Sprintf(format, args...)), fs.cmd)
	return exitUsage
}

// newLogger returns the command's logger on stderr: at --log-level, else
// info level (debug when verbose), in --log-format (text by default). The
// runtime passes it to Proto.Actor, which it keeps at warn level unless the
// logger is at debug level.
func (fs *flagSet) newLogger(verbose bool) *slog.Logger {
	return fs.log.logger(fs.stderr, slog.LevelInfo, verbose)
}

// failure reports err, the failure of the command cmd at run time, as one
// plain line on stderr, "ringactor CMD: what went wrong", and returns
// exitFailure.
func failure(stderr io.Writer, cmd string, err error) int {
	var ae *cluster.AddressError
	if errors.As(err, &ae) && ae.Malformed {
		// An address that can never work is a usage mistake: exit 2.
		fmt.Fprintf(stderr, "ringactor %s: %s\nRun 'ringactor %s -h' for usage.\n", cmd, oneLine(err.Error()), cmd)
		return exitUsage
	}
	if errors.Is(err, context.Canceled) {
		fmt.Fprintf(stderr, "ringactor %s: interrupted\n", cmd)
	} else {
		// A library error may start with the command's name ("pagerank:
		// open …"): said once.
		fmt.Fprintf(stderr, "ringactor %s: %s\n", cmd, strings.TrimPrefix(oneLine(err.Error()), cmd+": "))
	}
	return exitFailure
}

// oneLine joins the lines of a message (errors.Join makes several) with
// "; ".
func oneLine(msg string) string {
	msg = strings.TrimRight(msg, "\n")
	if !strings.ContainsAny(msg, "\r\n") {
		return msg
	}
	return strings.Join(strings.FieldsFunc(msg, func(r rune) bool { return r == '\n' || r == '\r' }), "; ")
}

// versionCommand is the "version" subcommand; "ringactor --version" is the
// same.
var versionCommand = command{
	name:    "version",
	summary: "print ringactor's release, module version and the Go version it was built with",
	run:     runVersionCommand,
}

// runVersionCommand prints versionString on stdout.
func runVersionCommand(_ context.Context, args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("version", "", "Print ringactor's release (CHANGELOG.md's latest), its module version\n(\"(devel)\" for a build from a work tree) and the Go version it was built\nwith, on one line: ringactor RELEASE module=VERSION GOVERSION.\n", stderr)
	if code, ok := parseFlags(fs, args); !ok {
		return code
	}
	fmt.Fprintln(stdout, versionString())
	return exitOK
}

// versionString is "ringactor RELEASE module=VERSION GOVERSION": the
// release constant (version.Version), the main module's version from the
// build information ("(devel)" when it has none) and the Go version.
func versionString() string {
	v := "(devel)"
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" {
		v = bi.Main.Version
	}
	return fmt.Sprintf("ringactor %s module=%s %s", version.Version, v, runtime.Version())
}

// quoteClip quotes s as %q does, at most its first 80 bytes (cut back to
// the start of a character) and "…" after the quote when s is longer.
func quoteClip(s string) string {
	const maxBytes = 80
	if len(s) <= maxBytes {
		return strconv.Quote(s)
	}
	cut := maxBytes
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return strconv.Quote(s[:cut]) + "…"
}
