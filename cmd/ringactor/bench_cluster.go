package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"time"

	"github.com/ringactor/ringactor/actors"
	"github.com/ringactor/ringactor/cluster"
	"github.com/ringactor/ringactor/internal/bench"
)

// benchCluster starts a second member in a process of its own (this
// binary's serve command, hosting the benchmark kinds), joins it as a
// member hosting nothing, and runs the cluster measures against it.
func benchCluster(ctx context.Context, cfg bench.ClusterConfig, log *slog.Logger) (*bench.ClusterResult, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, err
	}
	const name = "ringactor-bench"
	cmd := exec.CommandContext(ctx, exe, "serve", "--cluster", name, "--peers", "", "--bench-kinds")
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGTERM) }
	cmd.WaitDelay = 30 * time.Second
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	stopped := false
	stop := func() error {
		if stopped {
			return nil
		}
		stopped = true
		_ = cmd.Process.Signal(syscall.SIGTERM)
		return cmd.Wait()
	}
	defer func() { _ = stop() }()
	addr, err := readMemberAddress(ctx, out)
	if err != nil {
		return nil, err
	}
	log.Info("bench: cluster member started", slog.String("address", addr))
	sctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	m, err := cluster.Start(sctx, name, cluster.Peers([]string{addr}), nil, cluster.WithLogger(actors.DiscardLogger()))
	if err != nil {
		return nil, err
	}
	if err := m.WaitMembers(sctx, 2); err != nil {
		_ = m.Close(context.Background())
		return nil, err
	}
	res, err := bench.RunCluster(ctx, cfg, m)
	cctx, ccancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer ccancel()
	err = errors.Join(err, m.Close(cctx), stop())
	if err != nil {
		return nil, err
	}
	return &res, nil
}

// readMemberAddress reads the "member HOST:PORT" line serve prints once it
// has joined, and drains the rest of its stdout.
func readMemberAddress(ctx context.Context, r io.Reader) (string, error) {
	ch := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(r)
		found := false
		for sc.Scan() {
			if a, ok := strings.CutPrefix(sc.Text(), "member "); ok && !found {
				found = true
				ch <- a
			}
		}
		close(ch)
	}()
	select {
	case a, ok := <-ch:
		if !ok {
			return "", errors.New("the serve process exited before it joined")
		}
		return a, nil
	case <-ctx.Done():
		return "", ctx.Err()
	case <-time.After(30 * time.Second):
		return "", fmt.Errorf("the serve process did not join in 30s")
	}
}
