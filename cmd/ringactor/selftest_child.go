package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/ringactor/ringactor/internal/devcheck"
)

// Each selftest step runs in a child process: the binary re-executed with
// "selftest --child STEP". The child prints its result as one line on
// stdout; the parent kills a child that runs past its timeout, after
// SIGQUIT has made it write every goroutine's stack.

// runSelftestChild runs one step in this process and prints its result
// line on stdout (progress goes to stderr).
func runSelftestChild(ctx context.Context, name string, sim, quick bool, stdout, stderr io.Writer) int {
	s, ok := devcheck.Lookup(name)
	if !ok {
		fmt.Fprintf(stderr, "ringactor selftest: unknown step %q\n", name)
		return exitUsage
	}
	res := devcheck.Run(ctx, s, devcheck.Config{Sim: sim, Quick: quick, Log: stderr})
	b, err := json.Marshal(res)
	if err != nil {
		return failure(stderr, "selftest", err)
	}
	fmt.Fprintf(stdout, "%s%s\n", childResultPrefix, b)
	return exitOK
}

// tailBuffer keeps the last max bytes written to it.
type tailBuffer struct {
	mu   sync.Mutex
	max  int
	buf  []byte
	echo io.Writer // nil: none
}

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.echo != nil {
		_, _ = t.echo.Write(p)
	}
	t.buf = append(t.buf, p...)
	if over := len(t.buf) - t.max; over > 0 {
		t.buf = append(t.buf[:0], t.buf[over:]...)
	}
	return len(p), nil
}

func (t *tailBuffer) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return string(t.buf)
}

// quitGrace is how long a child sent SIGQUIT has to write its stacks and
// exit before it is killed.
const quitGrace = 10 * time.Second

// runStepChild runs step s in a child process under timeout and returns
// its result and, for a failure, what the report adds (the stacks of a
// hung child, the end of its stderr).
// Its Seconds is the whole process's, from start to exit.
func runStepChild(ctx context.Context, s devcheck.Step, sim, quick bool, timeout time.Duration, verbose bool, stderr io.Writer) (res devcheck.Result, extra map[string]any) {
	res = devcheck.Result{Name: s.Name, Status: devcheck.Fail}
	start := time.Now()
	defer func() { res.Seconds = time.Since(start).Seconds() }()
	exe, err := os.Executable()
	if err != nil {
		res.Reason = "finding this binary: " + err.Error()
		return res, nil
	}
	args := append(slices.Clone(selfPrefix), "selftest", childFlag, s.Name)
	if sim {
		args = append(args, "--device=sim")
	}
	if quick {
		args = append(args, "--quick")
	}
	cmd := exec.Command(exe, args...)
	cmd.Env = append(append(os.Environ(), selfEnv...), "GOTRACEBACK=all")
	var out bytes.Buffer
	errBuf := &tailBuffer{max: 4 << 20}
	if verbose {
		errBuf.echo = stderr
	}
	cmd.Stdout, cmd.Stderr = &out, errBuf
	if err := cmd.Start(); err != nil {
		res.Reason = "starting the step's process: " + err.Error()
		return res, nil
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	var waitErr error
	hung := false
	select {
	case waitErr = <-done:
	case <-timer.C:
		hung = true
	case <-ctx.Done():
		hung = true
	}
	if hung {
		// SIGQUIT: the Go runtime writes every goroutine's stack to stderr
		// (GOTRACEBACK=all) and exits; SIGKILL if it does not.
		_ = cmd.Process.Signal(syscall.SIGQUIT)
		select {
		case <-done:
		case <-time.After(quitGrace):
			_ = cmd.Process.Kill()
			<-done
		}
		log := errBuf.String()
		res.Reason = fmt.Sprintf("timed out after %v and killed", timeout)
		if ctx.Err() != nil {
			res.Reason = "interrupted"
		}
		if p := lastProgress(log); p != "" {
			res.Reason += "; last progress: " + p
		}
		return res, map[string]any{"stacks": stacksOf(log)}
	}
	line := resultLine(out.String())
	if line == "" {
		res.Reason = fmt.Sprintf("the step's process ended without a result (%v)", waitErr)
		return res, map[string]any{"stderr_tail": tail(errBuf.String(), 8000)}
	}
	if err := json.Unmarshal([]byte(line), &res); err != nil {
		res.Status, res.Reason = devcheck.Fail, "reading the step's result: "+err.Error()
		return res, nil
	}
	if waitErr != nil && res.Status != devcheck.Fail {
		res.Status, res.Reason = devcheck.Fail, fmt.Sprintf("the step's process exited with %v after its result", waitErr)
		return res, map[string]any{"stderr_tail": tail(errBuf.String(), 8000)}
	}
	if res.Status == devcheck.Fail {
		return res, map[string]any{"stderr_tail": tail(errBuf.String(), 8000)}
	}
	return res, nil
}

// resultLine finds the child's result line on its stdout.
func resultLine(stdout string) string {
	sc := bufio.NewScanner(strings.NewReader(stdout))
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), childResultPrefix); ok {
			return rest
		}
	}
	return ""
}

// lastProgress returns the last progress line a step wrote.
func lastProgress(log string) string {
	lines := strings.Split(log, "\n")
	for i := len(lines) - 1; i >= 0; i-- {
		if _, p, ok := strings.Cut(lines[i], " devcheck: "); ok {
			return p
		}
	}
	return ""
}

// stacksOf returns the goroutine dump of a child killed with SIGQUIT: its
// stderr from "SIGQUIT" on (all of it when the marker is missing).
func stacksOf(log string) string {
	if i := strings.Index(log, "SIGQUIT"); i >= 0 {
		return log[i:]
	}
	return log
}

// tail returns the last n bytes of s.
func tail(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[len(s)-n:]
}
