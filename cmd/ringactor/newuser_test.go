package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ringactor/ringactor/actors"
	"github.com/ringactor/ringactor/cluster"
	"github.com/ringactor/ringactor/internal/demo"
	"github.com/ringactor/ringactor/internal/testutil/testproc"
)

// writeFile writes content to a file of the test's and returns its path.
func writeFile(t *testing.T, content string) string {
	t.Helper()
	name := filepath.Join(t.TempDir(), "in")
	if err := os.WriteFile(name, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return name
}

// flagLine is a flag's line in a command's help: "  -name ARG" (ARG
// optional).
var flagLine = regexp.MustCompile(`^  -(\S+)(?: (.*))?$`)

// Every flag's argument name in every command's help is one word (a
// placeholder such as ADDR or a type such as string): back-quoted text in
// a flag's usage becomes its argument name, so "-bench-kinds ringactor
// bench --cluster" read as a flag taking an argument, and "-device =sim".
func TestHelpFlagArgumentNames(t *testing.T) {
	word := regexp.MustCompile(`^[A-Za-z][A-Za-z0-9_]*$`)
	for name := range commands {
		code, _, stderr := runCLI(t, "help", name)
		if code != exitOK {
			t.Fatalf("help %s: exit %d", name, code)
		}
		for _, l := range strings.Split(stderr, "\n") {
			m := flagLine.FindStringSubmatch(l)
			if m == nil || m[2] == "" {
				continue
			}
			if arg := m[2]; !word.MatchString(arg) {
				t.Errorf("help %s: flag -%s shows the argument %q:\n%s", name, m[1], arg, l)
			}
		}
	}
}

// "ringactor help help" is help, not an unknown command.
func TestHelpHelp(t *testing.T) {
	code, stdout, stderr := runCLI(t, "help", "help")
	if code != exitOK || stdout != "" || !strings.Contains(stderr, "Usage:") || strings.Contains(stderr, `unknown command "help"`) {
		t.Fatalf("help help: exit %d, stdout %q, stderr:\n%s", code, stdout, stderr)
	}
}

// The command's name is said once, and the counts are in the right number.
func TestPagerankMessages(t *testing.T) {
	code, _, stderr := runPagerankCLI(t, filepath.Join(t.TempDir(), "nofile.edges"))
	if code != exitFailure || !strings.HasPrefix(stderr, "ringactor pagerank: open ") {
		t.Fatalf("missing file: exit %d, stderr %q", code, stderr)
	}
	// One edge, and a tolerance met by the first iteration.
	code, _, stderr = runPagerankCLI(t, "--tol", "1e300", "--partitions", "1", writeFile(t, "a b\n"))
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if !strings.Contains(stderr, ": 2 nodes, 1 edge, 1 partition kernel: converged after 1 iteration in ") {
		t.Fatalf("summary: %q", stderr)
	}
}

// `call` against a seed where nothing listens names the address; an
// unknown kind names the kinds that exist.
func TestCallSaysWhy(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	dead := l.Addr().String()
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	_, stderr, code := call(t, "--cluster", "dead", "--peers", dead, "--kind", "echo", "--identity", "a",
		"--data", "{}", "--timeout", "1s")
	if code != exitFailure || !strings.Contains(stderr, dead+" refused the connection") {
		t.Errorf("dead seed: exit %d, stderr:\n%s", code, stderr)
	}
	_, stderr, code = call(t, "--cluster", "dead", "--peers", dead, "--kind", "nope", "--identity", "a",
		"--data", "{}", "--timeout", "1s")
	if code != exitFailure || !strings.Contains(stderr, `"nope" has no JSON form here`) ||
		!strings.Contains(stderr, "add, counter, devscale, echo") {
		t.Errorf("unknown kind: exit %d, stderr:\n%s", code, stderr)
	}
}

// viewWriter counts the views top writes and cancels the run after two.
type viewWriter struct {
	mu     sync.Mutex
	b      bytes.Buffer
	n      int
	cancel context.CancelFunc
}

func (w *viewWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.n++
	if w.n == 2 {
		w.cancel()
	}
	return w.b.Write(p)
}

// A live top whose output is not a terminal writes no control codes: its
// views follow one another.
func TestTopLiveNotATerminal(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		_, _ = w.Write([]byte(`{"time":"2026-01-01T00:00:00Z","kernels":[]}`))
	}))
	defer srv.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	w := &viewWriter{cancel: cancel}
	var stderr bytes.Buffer
	code := run(ctx, []string{"top", "--admin", strings.TrimPrefix(srv.URL, "http://"), "--interval", "10ms"}, w, &stderr)
	if code != exitOK {
		t.Fatalf("top: exit %d: %s", code, stderr.String())
	}
	w.mu.Lock()
	out := w.b.String()
	w.mu.Unlock()
	if strings.Contains(out, "\x1b") {
		t.Fatalf("top wrote terminal control codes to a non-terminal:\n%q", out)
	}
	if n := strings.Count(out, "ringactor top "); n != 2 || !strings.Contains(out, "\n\nringactor top ") {
		t.Fatalf("want two views a blank line apart:\n%q", out)
	}
}

// A member's /metrics has ringactor_cluster_request_duration_seconds, by
// kind and outcome, for the requests it sends (README: what a member
// exports).
func TestMemberExportsClusterRequestDuration(t *testing.T) {
	ctx := testCtx(t)
	addr := "127.0.0.1:0"
	adm := &adminFlags{addr: &addr, pprof: new(bool)}
	name := fmt.Sprintf("request-duration-%d", time.Now().UnixNano())
	ops, err := startOps(ctx, adm, name, cluster.DefaultAddress, actors.DiscardLogger())
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := ops.close(); err != nil {
			t.Error(err)
		}
	}()
	m, err := cluster.Start(ctx, name, cluster.Peers(nil), demo.Kinds(func() string { return "" }),
		cluster.WithLogger(actors.DiscardLogger()), cluster.WithTelemetry(ops.prov))
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := m.Close(context.Background()); err != nil {
			t.Error(err)
		}
	}()
	demo.Register()
	const n = 5
	for i := range n {
		if _, err := cluster.RequestJSON(ctx, m, "echo", "d", []byte(fmt.Sprintf(`{"i":%d}`, i))); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := cluster.RequestJSON(ctx, m, "add", "d", []byte(`{"a":[1],"b":[]}`)); err == nil {
		t.Fatal("a bad add request succeeded")
	}
	_, text := get(t, "http://"+ops.server.Addr()+"/metrics")
	var ok, failed string
	for _, l := range strings.Split(text, "\n") {
		if !strings.HasPrefix(l, "ringactor_cluster_request_duration_seconds_count{") {
			continue
		}
		switch {
		case strings.Contains(l, `kind="echo"`) && strings.Contains(l, `outcome="ok"`):
			ok = l
		case strings.Contains(l, `kind="add"`) && strings.Contains(l, `outcome="error"`):
			failed = l
		}
	}
	if !strings.HasSuffix(ok, fmt.Sprintf(" %d", n)) || !strings.HasSuffix(failed, " 1") {
		t.Fatalf("request duration counts: ok %q, error %q; /metrics:\n%s", ok, failed, text)
	}
}

// notifier is a writer that signals every write.
type notifier chan struct{}

func (n notifier) Write(p []byte) (int, error) {
	select {
	case n <- struct{}{}:
	default:
	}
	return len(p), nil
}

// When a member is killed, each survivor logs one warning naming the lost
// member's address, and none of Proto.Actor's gossip warnings about it.
func TestLostMemberLoggedOnceWithAddress(t *testing.T) {
	name := fmt.Sprintf("lost-%d", time.Now().UnixNano())
	logA, wrote := &testproc.Buffer{}, make(notifier, 1)
	cmdA := commandProcess(t, "serve", "--cluster", name, "--peers", "")
	cmdA.Stderr = io.MultiWriter(logA, wrote)
	a := testproc.StartJoined(t, "serve a", cmdA, logA, nil)

	cmdB := commandProcess(t, "serve", "--cluster", name, "--peers", a)
	out, err := cmdB.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	logB := &testproc.Buffer{}
	cmdB.Stderr = logB
	if err := cmdB.Start(); err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(out)
	b := ""
	for sc.Scan() {
		if addr, ok := strings.CutPrefix(sc.Text(), "member "); ok {
			b = addr
			break
		}
	}
	if b == "" {
		_ = cmdB.Process.Kill()
		_ = cmdB.Wait()
		t.Fatalf("member b did not join:\n%s", logB)
	}
	// b has joined through a (a answered its greeting, so a counts it);
	// a client that joins through both settles once both answer.
	ctx := testCtx(t)
	client, err := cluster.Start(ctx, name, cluster.Peers([]string{a, b}), nil, cluster.AsClient(), cluster.WithLogger(actors.DiscardLogger()))
	if err != nil {
		t.Fatal(err)
	}
	if err := client.WaitReady(ctx); err != nil {
		t.Fatal(err)
	}
	if err := client.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := cmdB.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = cmdB.Wait() // killed: its status says so
	want := "lost a member"
	for !strings.Contains(logA.String(), want) {
		select {
		case <-wrote:
		case <-ctx.Done():
			t.Fatalf("a never logged %q about %s:\n%s", want, b, logA)
		}
	}
	var lost []string
	for _, l := range strings.Split(logA.String(), "\n") {
		if strings.Contains(l, want) {
			lost = append(lost, l)
		}
	}
	if len(lost) != 1 || !strings.Contains(lost[0], "level=WARN") || !strings.Contains(lost[0], "address="+b) {
		t.Fatalf("lines about the lost member: %q, want one warning with address=%s\n%s", lost, b, logA)
	}
	if strings.Contains(logA.String(), "sendGossipForMember failed") {
		t.Fatalf("a logged Proto.Actor's gossip warnings:\n%s", logA)
	}
}
