// Package excli gives the example programs ringactor's command-line rules
// (see cmd/ringactor): -h, -help and --help print the usage on stderr and
// exit 0; a usage mistake (bad flag or value, unexpected argument) is one
// line "NAME: what is wrong" and a hint at -h on stderr, exit status 2; a
// failure at run time is one line "NAME: what went wrong", exit status 1.
package excli

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
)

// Exit statuses of the example programs.
const (
	ExitOK      = 0 // success, and every help request
	ExitFailure = 1 // the program ran and failed
	ExitUsage   = 2 // the command line was wrong
)

// Parse parses args into fs. synopsis follows the program's name in the
// usage line ("[-top K] [FILE]"); description, if not empty, follows it.
// When ok is false the program must not run and code is its exit status:
// ExitOK for -h (the usage is printed), ExitUsage for a bad flag
// (reported). Positional arguments are left in fs.Args for the caller,
// who rejects those it does not take with UsageError.
func Parse(fs *flag.FlagSet, synopsis, description string, args []string, stderr io.Writer) (code int, ok bool) {
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fmt.Fprintf(stderr, "Usage: %s %s\n\n", fs.Name(), synopsis)
			if description != "" {
				fmt.Fprintf(stderr, "%s\n", strings.TrimRight(description, "\n"))
				fmt.Fprintln(stderr)
			}
			fmt.Fprintln(stderr, "Flags:")
			fs.SetOutput(stderr)
			fs.PrintDefaults()
			fs.SetOutput(io.Discard)
			return ExitOK, false
		}
		return UsageError(stderr, fs.Name(), "%v", err), false
	}
	return ExitOK, true
}

// NoArgs parses args into fs like Parse and accepts no positional
// argument.
func NoArgs(fs *flag.FlagSet, synopsis, description string, args []string, stderr io.Writer) (code int, ok bool) {
	if code, ok := Parse(fs, synopsis, description, args, stderr); !ok {
		return code, false
	}
	if fs.NArg() > 0 {
		return UsageError(stderr, fs.Name(), "unexpected argument %q", fs.Arg(0)), false
	}
	return ExitOK, true
}

// UsageError reports a mistake on the command line of the program name in
// one line and a hint at -h, and returns ExitUsage.
func UsageError(stderr io.Writer, name, format string, args ...any) int {
	fmt.Fprintf(stderr, "%s: %s\nRun '%s -h' for usage.\n", name, oneLine(fmt.Sprintf(format, args...)), name)
	return ExitUsage
}

// Fail reports err, the program's failure at run time, as one line "NAME:
// what went wrong" on stderr and returns ExitFailure.
func Fail(stderr io.Writer, name string, err error) int {
	fmt.Fprintf(stderr, "%s: %s\n", name, strings.TrimPrefix(oneLine(err.Error()), name+": "))
	return ExitFailure
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
