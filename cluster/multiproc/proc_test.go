package multiproc

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ringactor/ringactor/internal/testutil/racecheck"
	"github.com/ringactor/ringactor/internal/testutil/testproc"
)

// TestMain runs a child's part when this test binary is started as one.
// The test process itself starts no Proto.Actor node: Proto.Actor sets
// gRPC's global logger in every remote.Start and has data races of its own
// when a remote stops, so every node runs in a child process whose race
// reports are checked with racecheck (races in ringactor's code fail the
// test; Proto.Actor's own are tolerated).
func TestMain(m *testing.M) {
	switch mode := os.Getenv(childEnv); mode {
	case "":
		os.Exit(m.Run())
	case "member":
		os.Exit(runMember())
	default:
		os.Exit(runScenario(mode))
	}
}

// proc is a child process running a member or a client scenario.
type proc struct {
	name   string
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	lines  chan string
	stderr *testproc.Buffer
	waited chan error
	ended  bool
}

// startProc starts this test binary as a child running mode, knowing
// seeds; it is stopped (SIGTERM) and checked at the end of the test.
func startProc(t *testing.T, mode string, seeds []string, env ...string) *proc {
	t.Helper()
	return startProcIn(t, "", mode, seeds, env...)
}

// startProcIn is startProc in the network namespace netns (through `ip
// netns exec`, which execs the child: its pid is the child's); "" is this
// process's own namespace.
func startProcIn(t *testing.T, netns, mode string, seeds []string, env ...string) *proc {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe, "-test.run=^$")
	if netns != "" {
		cmd = exec.Command("ip", "netns", "exec", netns, exe, "-test.run=^$")
	}
	// A race report does not change the child's exit status; stop reads
	// the reports (racecheck.DependencyOnly).
	cmd.Env = append(os.Environ(), childEnv+"="+mode, seedsEnv+"="+strings.Join(seeds, ","), "GORACE=exitcode=0")
	cmd.Env = append(cmd.Env, env...)
	p := &proc{name: mode, cmd: cmd, lines: make(chan string, 64), stderr: &testproc.Buffer{}, waited: make(chan error, 1)}
	cmd.Stderr = p.stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if p.stdin, err = cmd.StdinPipe(); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		sc := bufio.NewScanner(out)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			p.lines <- sc.Text()
		}
		close(p.lines)
		p.waited <- cmd.Wait()
	}()
	t.Cleanup(func() { p.signal(); p.stop(t) })
	return p
}

// expect waits up to d for the child's next line starting with prefix and
// returns the rest of it.
func (p *proc) expect(t *testing.T, prefix string, d time.Duration) string {
	t.Helper()
	return p.await(t, prefix, d, false)
}

// expectProgressing waits for the child's next line starting with prefix
// and returns the rest of it, as long as the child prints some line at
// least every idle: a hang guard for a step whose length grows with the
// machine's load (the child prints progress lines meanwhile).
func (p *proc) expectProgressing(t *testing.T, prefix string, idle time.Duration) string {
	t.Helper()
	return p.await(t, prefix, idle, true)
}

// await waits for the child's next line starting with prefix and returns
// the rest of it. The test fails when the child exits first, or when d
// passes without that line: since the wait began, or, when progressing,
// since the child's last line of any kind. Either failure names the
// child's last line and shows its stderr.
func (p *proc) await(t *testing.T, prefix string, d time.Duration, progressing bool) string {
	t.Helper()
	timer := time.NewTimer(d)
	defer timer.Stop()
	last := "nothing yet"
	for {
		select {
		case l, ok := <-p.lines:
			if !ok {
				t.Fatalf("%s exited before printing %q (its last line: %s):\n%s", p.name, prefix, last, p.stderr)
			}
			if rest, found := strings.CutPrefix(l, prefix); found {
				return rest
			}
			last = l
			if progressing {
				timer.Reset(d)
			}
		case <-timer.C:
			what := fmt.Sprintf("no %q", prefix)
			if progressing {
				what = fmt.Sprintf("nothing while %q was awaited", prefix)
			}
			t.Fatalf("%s printed %s in %v (its last line: %s):\n%s", p.name, what, d, last, p.stderr)
		}
	}
}

// send writes one line to the child's stdin.
func (p *proc) send(t *testing.T, line string) {
	t.Helper()
	if _, err := io.WriteString(p.stdin, line+"\n"); err != nil {
		t.Fatal(err)
	}
}

// kill ends the process with SIGKILL and reaps it.
func (p *proc) kill(t *testing.T) {
	t.Helper()
	if err := p.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	<-p.waited
	p.ended = true
}

// signal asks the process to stop gracefully (SIGTERM).
func (p *proc) signal() {
	if !p.ended {
		_ = p.cmd.Process.Signal(syscall.SIGTERM)
	}
}

// stop waits for the process to end, and checks that it exited cleanly
// with no data race reported in ringactor's code.
func (p *proc) stop(t *testing.T) {
	if p.ended {
		return
	}
	p.ended = true
	select {
	case err := <-p.waited:
		if err != nil {
			t.Errorf("%s: %v:\n%s", p.name, err, p.stderr)
		}
	case <-time.After(20 * time.Second):
		_ = p.cmd.Process.Kill()
		<-p.waited
		t.Errorf("%s did not stop in 20s:\n%s", p.name, p.stderr)
	}
	_ = p.stdin.Close()
	if err := racecheck.DependencyOnly(p.stderr.String()); err != nil {
		t.Errorf("%s: %v", p.name, err)
	}
}

// startMembers starts n member processes, each knowing the ones before it,
// and returns them with their addresses. They are stopped together at the
// end of the test (each graceful stop takes seconds: Proto.Actor's
// shutdown sleeps two).
func startMembers(t *testing.T, n int, env ...string) ([]*proc, []string) {
	var procs []*proc
	var addrs []string
	for range n {
		p := startProc(t, "member", addrs, env...)
		a := p.expect(t, "ADDR ", 30*time.Second)
		p.name = "member " + a
		procs = append(procs, p)
		addrs = append(addrs, a)
	}
	t.Cleanup(func() {
		for _, p := range procs {
			p.signal()
		}
		for _, p := range procs {
			p.stop(t)
		}
	})
	return procs, addrs
}
