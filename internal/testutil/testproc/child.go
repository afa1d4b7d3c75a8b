package testproc

import (
	"bufio"
	"encoding/json"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ringactor/ringactor/internal/testutil/racecheck"
)

// ChildEnv, set in a test binary's environment, makes its TestMain run the
// command line after "--" instead of the tests (see IsChild).
const ChildEnv = "RINGACTOR_TEST_CHILD"

// ChildArgs returns the arguments after "--" and true when this test
// binary was started as a child by StartMember.
func ChildArgs() ([]string, bool) {
	if os.Getenv(ChildEnv) == "" {
		return nil, false
	}
	args := os.Args[1:]
	for i, a := range args {
		if a == "--" {
			return args[i+1:], true
		}
	}
	return nil, true
}

// Member is a cluster member running in a child process.
type Member struct {
	// Address is the member's remote address ("member ADDR" on stdout).
	Address string
	// Stderr is what the child wrote to stderr.
	Stderr *Buffer
}

// LogValue returns the string attribute key of the first JSON log record
// on the child's stderr whose msg is msg; "" if none.
func (m *Member) LogValue(msg, key string) string {
	for _, l := range strings.Split(m.Stderr.String(), "\n") {
		var rec map[string]any
		if json.Unmarshal([]byte(l), &rec) == nil && rec["msg"] == msg {
			v, _ := rec[key].(string)
			return v
		}
	}
	return ""
}

// StartMember starts this test binary as a child running args (its
// TestMain runs them when ChildArgs says so) and waits for its
// "member ADDR" line. At the end of the test the child gets SIGTERM and
// must exit 0 within 30 s; a data race in ringactor's code in its stderr
// fails the test (Proto.Actor's own races are tolerated: see racecheck).
func StartMember(t *testing.T, args ...string) *Member {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe, append([]string{"-test.run=^$", "--"}, args...)...)
	cmd.Env = append(os.Environ(), ChildEnv+"=1", "GORACE=exitcode=0")
	m := &Member{Stderr: &Buffer{}}
	cmd.Stderr = m.Stderr
	m.Address = StartJoined(t, "member", cmd, m.Stderr, nil)
	return m
}

// StartJoined starts cmd (a cluster member: `ringactor serve`, or a child
// from StartMember) whose stderr goes to stderr, and returns the address of
// its "member ADDR" stdout line, failing the test if it exits first or
// prints none within 30 s. At the end of the test it gets SIGTERM and must
// exit 0 within 30 s; a data race in ringactor's code in its stderr fails
// the test (Proto.Actor's own races are tolerated: see racecheck), and
// atExit, if set, checks the stderr of the stopped process. name says what
// the process is in failure messages.
func StartJoined(t *testing.T, name string, cmd *exec.Cmd, stderr *Buffer, atExit func(t *testing.T, stderr string)) string {
	t.Helper()
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	addr := make(chan string, 1)
	done := make(chan error, 1)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			if a, ok := strings.CutPrefix(sc.Text(), "member "); ok {
				addr <- a
			}
		}
		close(addr)
		done <- cmd.Wait()
	}()
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("%s: %v\n%s", name, err, stderr)
			}
		case <-time.After(30 * time.Second):
			_ = cmd.Process.Kill()
			t.Errorf("%s did not stop in 30s after SIGTERM\n%s", name, stderr)
		}
		if err := racecheck.DependencyOnly(stderr.String()); err != nil {
			t.Error(err)
		}
		if atExit != nil {
			atExit(t, stderr.String())
		}
	})
	select {
	case a, ok := <-addr:
		if !ok {
			t.Fatalf("%s exited before joining:\n%s", name, stderr)
		}
		return a
	case <-time.After(30 * time.Second):
		t.Fatalf("%s did not join in 30s:\n%s", name, stderr)
	}
	return ""
}
