package main

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/creack/pty"

	"github.com/ringactor/ringactor/actors"
	"github.com/ringactor/ringactor/cluster"
	"github.com/ringactor/ringactor/internal/demo"
)

// memberWithTraffic starts a member with an admin endpoint and sends n
// requests to the identity id of its echo kind; it returns the admin
// address.
func memberWithTraffic(t *testing.T, id string, n int) string {
	t.Helper()
	name := fmt.Sprintf("top-%d", time.Now().UnixNano())
	member, adminAddr := startServeAdmin(t, nil, "--cluster", name, "--peers", "")
	ctx := testCtx(t)
	client, err := cluster.Start(ctx, name, cluster.Peers([]string{member}), nil, cluster.AsClient(), cluster.WithLogger(actors.DiscardLogger()))
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close(context.Background())
	demo.Register()
	for i := range n {
		if _, err := cluster.RequestJSON(ctx, client, "echo", id, []byte(fmt.Sprintf(`{"i":%d}`, i))); err != nil {
			t.Fatal(err)
		}
	}
	waitLatencies(t, "http://"+adminAddr, "echo/"+id, uint64(n))
	return adminAddr
}

func TestTopOnceJSON(t *testing.T) {
	addr := memberWithTraffic(t, "t1", 9)
	code, out, stderr := runCLI(t, "top", "--admin", addr, "--once", "--json", "--interval", "20ms")
	if code != exitOK {
		t.Fatalf("top exited %d: %s", code, stderr)
	}
	var v topView
	if err := json.Unmarshal([]byte(out), &v); err != nil {
		t.Fatalf("top --json printed %q: %v", out, err)
	}
	var k *topKernel
	for i := range v.Kernels {
		if v.Kernels[i].Name == "echo/t1" {
			k = &v.Kernels[i]
		}
	}
	if k == nil || k.Processed != 9 || k.Latency.Count != 9 || k.Latency.P99 <= 0 || k.ProcessedPerS != 0 {
		t.Errorf("echo/t1 = %+v, want 9 processed, none during the interval", k)
	}
}

// TestTopLiveInPseudoTerminal runs `ringactor top` in a real pseudo-terminal:
// it redraws the view in place (clear and home before each), shows the
// kernel's row with its counters, and exits 0 on SIGINT.
func TestTopLiveInPseudoTerminal(t *testing.T) {
	addr := memberWithTraffic(t, "t2", 5)
	cmd := commandProcess(t, "top", "--admin", addr, "--interval", "30ms")
	tty, err := pty.StartWithSize(cmd, &pty.Winsize{Rows: 40, Cols: 160})
	if err != nil {
		t.Fatal(err)
	}
	defer tty.Close()
	var mu sync.Mutex
	var screen strings.Builder
	changed := make(chan struct{}, 1)
	readDone := make(chan struct{})
	go func() {
		defer close(readDone)
		buf := make([]byte, 4096)
		for {
			n, err := tty.Read(buf)
			if n > 0 {
				mu.Lock()
				screen.Write(buf[:n])
				mu.Unlock()
				select {
				case changed <- struct{}{}:
				default:
				}
			}
			if err != nil {
				return
			}
		}
	}()
	deadline := time.After(20 * time.Second)
	for {
		mu.Lock()
		s := screen.String()
		mu.Unlock()
		frames := strings.Split(s, clearScreen)
		if len(frames) >= 4 { // three complete redraws after the first
			last := frames[len(frames)-2]
			if !strings.Contains(last, "echo/t2") || !strings.Contains(last, "PROC/S") {
				t.Fatalf("a frame lacks the kernel row or the header:\n%q", last)
			}
			row := ""
			for _, l := range strings.Split(last, "\n") {
				if strings.Contains(l, "echo/t2") {
					row = l
				}
			}
			if f := strings.Fields(row); len(f) < 11 || f[1] != "active" || f[4] != "5" {
				t.Fatalf("kernel row %q, want state active and 5 processed", row)
			}
			break
		}
		select {
		case <-changed:
		case <-deadline:
			t.Fatalf("top drew %d frames in 20s:\n%q", len(frames)-1, s)
		}
	}
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Wait(); err != nil {
		t.Errorf("top after SIGINT: %v", err)
	}
	_ = tty.Close()
	<-readDone
}

func TestTopFlagMistakes(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{nil, "--admin is required"},
		{[]string{"--admin", "x:y"}, "--admin"},
		{[]string{"--admin", "1", "--json"}, "--json needs --once"},
		{[]string{"--admin", "1", "--interval", "0s"}, "--interval must be positive"},
	} {
		code, _, stderr := runCLI(t, append([]string{"top"}, tc.args...)...)
		if code != exitUsage || !strings.Contains(stderr, tc.want) {
			t.Errorf("top %v: exit %d, stderr %q; want 2 and %q", tc.args, code, stderr, tc.want)
		}
	}
	// Nothing listens: a failure at run time.
	code, _, stderr := runCLI(t, "top", "--admin", "127.0.0.1:1", "--once", "--interval", "1ms")
	if code != exitFailure || !strings.Contains(stderr, "ringactor top:") {
		t.Errorf("top against a closed port: exit %d, %q", code, stderr)
	}
}
