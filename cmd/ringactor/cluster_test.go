package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/ringactor/ringactor/internal/testutil/racecheck"
	"github.com/ringactor/ringactor/internal/testutil/testproc"
)

// mainEnv makes this test binary run the command line after "--" as the
// ringactor command (see TestMain), so tests can start serve and call in
// processes of their own: one cluster member per process.
const mainEnv = "RINGACTOR_CMD_MAIN"

// commandProcess is the ringactor command run as a child process.
func commandProcess(t *testing.T, args ...string) *exec.Cmd {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe, append([]string{"-test.run=^$", "--"}, args...)...)
	cmd.Env = append(os.Environ(), mainEnv+"=1", "GORACE=exitcode=0")
	return cmd
}

// startServe runs `ringactor serve` in a child process and returns the
// member's address; the member is stopped with SIGTERM at the end of the
// test, which must make it leave and exit 0.
func startServe(t *testing.T, args ...string) string {
	t.Helper()
	a, _ := startServeLog(t, args...)
	return a
}

// startServeLog is startServe that also returns the member's stderr.
func startServeLog(t *testing.T, args ...string) (string, *testproc.Buffer) {
	t.Helper()
	cmd := commandProcess(t, append([]string{"serve"}, args...)...)
	stderr := &testproc.Buffer{}
	cmd.Stderr = stderr
	a := testproc.StartJoined(t, "serve", cmd, stderr, func(t *testing.T, stderr string) {
		if !strings.Contains(stderr, "leaving the cluster") {
			t.Errorf("serve did not log its graceful leave:\n%s", stderr)
		}
	})
	return a, stderr
}

// call runs `ringactor call` in a child process.
func call(t *testing.T, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	cmd := commandProcess(t, append([]string{"call"}, args...)...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	if rerr := racecheck.DependencyOnly(errb.String()); rerr != nil {
		t.Error(rerr)
	}
	return out.String(), errb.String(), code
}

// TestServeAndCall starts two members with `ringactor serve` and calls the
// built-in kinds through `ringactor call`.
func TestServeAndCall(t *testing.T) {
	a := startServe(t, "--cluster", "cli", "--peers", "")
	if !strings.HasPrefix(a, "127.0.0.1:") {
		t.Fatalf("serve bound %s, want loopback by default", a)
	}
	b := startServe(t, "--cluster", "cli", "--peers", a)
	peers := a + "," + b
	for _, id := range []string{"x", "y", "z"} {
		out, errs, code := call(t, "--cluster", "cli", "--peers", peers, "--kind", "echo", "--identity", id, "--data", `{"hello":"world","n":[1,2]}`)
		if code != 0 {
			t.Fatalf("echo %s: exit %d: %s", id, code, errs)
		}
		var got map[string]any
		if err := json.Unmarshal([]byte(out), &got); err != nil || got["hello"] != "world" {
			t.Fatalf("echo %s printed %q (%v)", id, out, err)
		}
		// --json is the deprecated alias of --data: it works, with a notice.
		out, errs, code = call(t, "--cluster", "cli", "--peers", b, "--kind", "add", "--identity", id, "--json", `{"a":[1,2,3],"b":[4,5,6]}`)
		if code != 0 || strings.TrimSpace(out) != `{"sum":[5,7,9]}` || !strings.Contains(errs, "--json for the request body is deprecated") {
			t.Fatalf("add %s: exit %d, stdout %q, stderr %s", id, code, out, errs)
		}
	}
	// Failures: a typed error on stderr and exit status 1.
	_, errs, code := call(t, "--cluster", "cli", "--peers", a, "--kind", "add", "--identity", "x", "--data", `{"a":[1],"b":[]}`)
	if code != 1 || !strings.HasPrefix(errs, "ringactor call: ") || !strings.Contains(errs, "remote execution error") {
		t.Errorf("add with mismatched lengths: exit %d, stderr %s", code, errs)
	}
	_, errs, code = call(t, "--cluster", "cli", "--peers", a, "--kind", "nope", "--identity", "x", "--data", `{}`, "--timeout", "5s")
	if code != 1 || !strings.Contains(errs, "unknown kind") {
		t.Errorf("unknown kind: exit %d, stderr %s", code, errs)
	}
}

// TestServeCallUsage checks the usage errors of serve and call (exit 2,
// nothing started).
func TestServeCallUsage(t *testing.T) {
	for _, args := range [][]string{
		{"serve"},
		{"serve", "--cluster", "c"},
		{"serve", "--cluster", "c", "--peers", "", "--etcd", "http://127.0.0.1:2379"},
		{"serve", "--cluster", "c", "--peers", "", "--tls-ca", "ca.pem"},
		{"serve", "--cluster", "c", "--peers", "", "extra"},
		{"serve", "--cluster", "c", "--peers", "", "--advertise", "0.0.0.0:7000"},
		{"serve", "--cluster", "c", "--peers", "", "--advertise", "no-port"},
		{"serve", "--cluster", "c", "--peers", "", "--sim-devices", "-1"},
		{"call", "--cluster", "c", "--peers", "127.0.0.1:1", "--identity", "i", "--json", "{}"},
		{"call", "--cluster", "c", "--peers", "127.0.0.1:1", "--kind", "k", "--json", "{}"},
		{"call", "--cluster", "c", "--peers", "127.0.0.1:1", "--kind", "k", "--identity", "i", "--json", "{nope"},
		{"call", "--cluster", "c", "--peers", "127.0.0.1:1", "--kind", "k", "--identity", "i", "--json", "{}", "--timeout", "0s"},
	} {
		var out, errb bytes.Buffer
		if code := run(context.Background(), args, &out, &errb); code != exitUsage {
			t.Errorf("%q: exit %d, want %d; stderr %s", args, code, exitUsage, errb.String())
		}
		if out.Len() != 0 {
			t.Errorf("%q printed %q on stdout", args, out.String())
		}
	}
}

// TestServeCounterAndIsolation: the counter kind counts per identity
// whichever member a call goes through (one activation); a call of another
// cluster through a member is refused, naming both clusters, on both
// sides; a call with a dead seed before the live one answers; members log
// no error for the clients that came and went.
func TestServeCounterAndIsolation(t *testing.T) {
	a, logA := startServeLog(t, "--cluster", "count", "--peers", "")
	b, logB := startServeLog(t, "--cluster", "count", "--peers", a)
	for i, via := range []string{a, b, a, b} {
		out, errs, code := call(t, "--cluster", "count", "--peers", via, "--kind", "counter", "--identity", "carol", "--data", `{}`)
		var got struct {
			Count      int64
			Activation string
		}
		if code != 0 || json.Unmarshal([]byte(out), &got) != nil || got.Count != int64(i+1) {
			t.Fatalf("counter call %d via %s: exit %d, stdout %q, stderr %s", i+1, via, code, out, errs)
		}
	}
	_, errs, code := call(t, "--cluster", "other", "--peers", a, "--kind", "counter", "--identity", "carol", "--data", `{}`, "--timeout", "5s")
	if code != 1 || !strings.Contains(errs, "cluster mismatch") || !strings.Contains(errs, `"count"`) || !strings.Contains(errs, `"other"`) {
		t.Errorf("call of another cluster: exit %d, stderr %s", code, errs)
	}
	dead := "127.0.0.1:1" // nothing listens on port 1
	start := time.Now()
	out, errs, code := call(t, "--cluster", "count", "--peers", dead+","+b, "--kind", "counter", "--identity", "dave", "--data", `{}`, "--timeout", "3s")
	if code != 0 || !strings.Contains(out, `"count":1`) {
		t.Errorf("call with a dead seed: exit %d, stdout %q, stderr %s", code, out, errs)
	}
	t.Logf("call with a dead and a live seed took %v (process start included)", time.Since(start))
	for name, l := range map[string]*testproc.Buffer{"a": logA, "b": logB} {
		for _, line := range strings.Split(l.String(), "\n") {
			if strings.Contains(line, "level=ERROR") && !strings.Contains(line, "another cluster") {
				t.Errorf("member %s logged an error: %s", name, line)
			}
		}
	}
	if !strings.Contains(logA.String(), "another cluster") {
		t.Errorf("member a did not log the refused client of another cluster:\n%s", logA)
	}
}
