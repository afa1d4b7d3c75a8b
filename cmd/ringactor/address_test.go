package main

import (
	"bytes"
	"net"
	"os/exec"
	"strings"
	"testing"
)

// runCommand runs the ringactor command line args in a child process and
// returns its stdout, stderr and exit status.
func runCommand(t *testing.T, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	cmd := commandProcess(t, args...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return out.String(), errb.String(), code
}

// checkAddressFailure checks that args exit with want and print, on stderr,
// one line naming flag and address (and, for a usage mistake, the line that
// points at -h), no stack, nothing on stdout.
func checkAddressFailure(t *testing.T, want int, flag, address string, args ...string) {
	t.Helper()
	stdout, stderr, code := runCommand(t, args...)
	lines := strings.Split(strings.TrimRight(stderr, "\n"), "\n")
	wantLines := 1
	if want == exitUsage {
		wantLines = 2
	}
	switch {
	case code != want:
		t.Errorf("%q: exit %d, want %d; stderr:\n%s", args, code, want, stderr)
	case stdout != "":
		t.Errorf("%q printed %q on stdout", args, stdout)
	case strings.Contains(stderr, "goroutine ") || strings.Contains(stderr, "panic"):
		t.Errorf("%q printed a stack:\n%s", args, stderr)
	case len(lines) != wantLines:
		t.Errorf("%q: %d lines on stderr, want %d:\n%s", args, len(lines), wantLines, stderr)
	case !strings.HasPrefix(lines[0], "ringactor "+args[0]+": "+flag+": ") || !strings.Contains(lines[0], address):
		t.Errorf("%q: stderr %q does not start with %q and name %q", args, lines[0], "ringactor "+args[0]+": "+flag+": ", address)
	case want == exitUsage && !strings.HasPrefix(lines[1], "Run 'ringactor "+args[0]+" -h'"):
		t.Errorf("%q: second line %q, want the pointer to -h", args, lines[1])
	}
}

// TestServeCallAddressUsage: every serve or call address that cannot work
// is one line naming the flag and the address, exit status 2 when it can
// never work (a usage mistake) and 1 when it cannot work here and now.
func TestServeCallAddressUsage(t *testing.T) {
	serve := []string{"serve", "--cluster", "c"}
	call := []string{"call", "--cluster", "c", "--kind", "echo", "--identity", "i", "--data", "{}", "--timeout", "5s"}
	with := func(base []string, more ...string) []string { return append(append([]string(nil), base...), more...) }
	for _, c := range []struct {
		name          string
		args          []string
		code          int
		flag, address string
	}{
		{"ServeBindInvalidIP", with(serve, "--peers", "", "--bind", "256.0.0.1:1"), exitUsage, "--bind", "256.0.0.1:1"},
		{"ServeBindBadName", with(serve, "--peers", "", "--bind", "my host:7000"), exitUsage, "--bind", "my host:7000"},
		{"ServeBindUnresolvable", with(serve, "--peers", "", "--bind", "no-such-host.invalid:7000"), exitFailure, "--bind", "no-such-host.invalid:7000"},
		{"ServeBindNotLocal", with(serve, "--peers", "", "--bind", "192.0.2.1:7000"), exitFailure, "--bind", "192.0.2.1:7000"},
		{"ServeAdvertiseInvalidIP", with(serve, "--peers", "", "--advertise", "256.1.1.1:7000"), exitUsage, "--advertise", "256.1.1.1:7000"},
		{"ServeAdvertiseUnresolvable", with(serve, "--peers", "", "--advertise", "nowhere.invalid:7000"), exitFailure, "--advertise", "nowhere.invalid:7000"},
		{"ServeSeedWildcard", with(serve, "--peers", "0.0.0.0:7000"), exitUsage, "--peers", "0.0.0.0:7000"},
		{"ServeSeedInvalidIP", with(serve, "--peers", "127.0.0.1:7000,256.0.0.1:7000"), exitUsage, "--peers", "256.0.0.1:7000"},
		{"ServeSeedUnresolvable", with(serve, "--peers", "no-such-host.invalid:7000"), exitFailure, "--peers", "no-such-host.invalid:7000"},
		{"CallSeedWildcard", with(call, "--peers", "0.0.0.0:7000"), exitUsage, "--peers", "0.0.0.0:7000"},
		{"CallSeedInvalidIP", with(call, "--peers", "256.0.0.1:7000"), exitUsage, "--peers", "256.0.0.1:7000"},
	} {
		t.Run(c.name, func(t *testing.T) {
			checkAddressFailure(t, c.code, c.flag, c.address, c.args...)
		})
	}
}

// TestServeBindUnusable: a bind port another process holds is one line
// naming --bind and the address, exit status 1.
func TestServeBindUnusable(t *testing.T) {
	held, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer held.Close()
	addr := held.Addr().String()
	checkAddressFailure(t, exitFailure, "--bind", addr, "serve", "--cluster", "c", "--peers", "", "--bind", addr)
}

// TestCallUnresolvableSeed: a call whose seeds all fail to resolve fails
// at once (not after its timeout) with one line naming --peers and the
// seed, exit status 1.
func TestCallUnresolvableSeed(t *testing.T) {
	checkAddressFailure(t, exitFailure, "--peers", "no-such-host.invalid:7000",
		"call", "--cluster", "c", "--peers", "no-such-host.invalid:7000,other.invalid:7000",
		"--kind", "echo", "--identity", "i", "--data", "{}", "--timeout", "60s")
}
