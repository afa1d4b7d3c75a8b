//go:build !race

// Built without -race like cluster_test.go: several members in one process.

package cluster_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"runtime"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/ringactor/ringactor/cluster"
	"github.com/ringactor/ringactor/internal/testutil/testproc"
)

// freeLoopbackPort returns a loopback TCP port that was free a moment ago.
func freeLoopbackPort(t *testing.T) int { return testproc.FreeLoopbackPort(t) }

// startEtcd starts a single-node etcd (testproc.StartEtcd) and returns its
// client endpoint. The test is skipped when there is no etcd binary.
func startEtcd(t *testing.T) string {
	t.Helper()
	if !testproc.HaveEtcd() {
		t.Skip("etcd not found in PATH (Debian: apt-get install etcd-server); skipping the etcd provider test")
	}
	return testproc.StartEtcd(t, "ringactor-test")
}

// waitNoGoroutine waits until no goroutine's stack mentions fn: the etcd
// provider's keep-alive loop sleeps a second before it sees the shutdown.
func waitNoGoroutine(t *testing.T, fn string, within time.Duration) {
	t.Helper()
	deadline := time.Now().Add(within)
	buf := make([]byte, 1<<20)
	for {
		n := runtime.Stack(buf, true)
		if !bytes.Contains(buf[:n], []byte(fn)) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("goroutines running %s after %v", fn, within)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func TestEtcdProvider(t *testing.T) {
	endpoint := startEtcd(t)
	// Registered before the members' cleanups, so it runs after them.
	t.Cleanup(func() { waitNoGoroutine(t, "cluster.(*etcdProvider)", 5*time.Second) })

	newProvider := func() *cluster.Member {
		p, err := cluster.Etcd([]string{endpoint}, cluster.WithEtcdBaseKey("/ringactor-test"))
		if err != nil {
			t.Fatal(err)
		}
		return startIsolatedMember(t, "etcd", p, kinds())
	}
	a, b := newProvider(), newProvider()
	ctx, cancel := context.WithCancel(testCtx(t)) // a hang guard, not a speed bound
	defer cancel()
	for _, m := range []*cluster.Member{a, b} {
		if err := m.WaitMembers(ctx, 2); err != nil {
			t.Fatal(err)
		}
	}
	requestSpread(t, ctx, a, "etcd-a", 24)
	requestSpread(t, ctx, b, "etcd-b", 24)
	if a.Activations() == 0 || b.Activations() == 0 {
		t.Fatalf("activations A=%d B=%d: want identities on both members", a.Activations(), b.Activations())
	}

	// B leaves: it deregisters, and A sees a one-member topology.
	closeMember(t, b)
	deadline := time.Now().Add(5 * time.Second)
	for a.Cluster().MemberList.Members().Len() != 1 {
		if time.Now().After(deadline) {
			t.Fatalf("A still sees %d members 5s after B left", a.Cluster().MemberList.Members().Len())
		}
		time.Sleep(20 * time.Millisecond)
	}
	// Every identity is now served by A.
	requestSpread(t, ctx, a, "etcd-after", 8)
}

func TestEtcdUnavailable(t *testing.T) {
	endpoint := fmt.Sprintf("127.0.0.1:%d", freeLoopbackPort(t)) // nothing listens there
	start := time.Now()
	_, err := cluster.Etcd([]string{endpoint}, cluster.WithEtcdDialTimeout(300*time.Millisecond))
	if !errors.Is(err, cluster.ErrEtcdUnavailable) {
		t.Fatalf("got %v, want ErrEtcdUnavailable", err)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Fatalf("failed after %v with a 300ms dial timeout", d)
	}
	if _, err := cluster.Etcd(nil); !errors.Is(err, cluster.ErrEtcdUnavailable) {
		t.Fatalf("no endpoints: got %v", err)
	}
}

// etcdClientRecords is a slog.Handler that counts the records of the etcd
// client (attribute logger=etcd-client) and drops the others.
type etcdClientRecords struct {
	n     atomic.Int64
	attrs []slog.Attr // from WithAttrs; groups are flattened
}

func (h *etcdClientRecords) Enabled(context.Context, slog.Level) bool { return true }
func (h *etcdClientRecords) Handle(_ context.Context, r slog.Record) error {
	etcd := false
	check := func(a slog.Attr) bool {
		if a.Key == "logger" && a.Value.String() == "etcd-client" {
			etcd = true
		}
		return true
	}
	for _, a := range h.attrs {
		check(a)
	}
	r.Attrs(check)
	if etcd {
		h.n.Add(1)
	}
	return nil
}
func (h *etcdClientRecords) WithAttrs(as []slog.Attr) slog.Handler {
	return &etcdClientRecordsView{h, append(slices.Clip(h.attrs), as...)}
}
func (h *etcdClientRecords) WithGroup(string) slog.Handler { return h }

// etcdClientRecordsView counts into the same counter with more attributes.
type etcdClientRecordsView struct {
	root  *etcdClientRecords
	attrs []slog.Attr
}

func (v *etcdClientRecordsView) Enabled(context.Context, slog.Level) bool { return true }
func (v *etcdClientRecordsView) Handle(ctx context.Context, r slog.Record) error {
	r = r.Clone()
	r.AddAttrs(v.attrs...)
	return v.root.Handle(ctx, r)
}
func (v *etcdClientRecordsView) WithAttrs(as []slog.Attr) slog.Handler {
	return &etcdClientRecordsView{v.root, append(slices.Clip(v.attrs), as...)}
}
func (v *etcdClientRecordsView) WithGroup(string) slog.Handler { return v }

// TestEtcdClientLogs checks that the etcd client's log records (zap) reach
// slog: the WithEtcdLogger logger when one is given, else the member's
// logger. The client's endpoint auto-sync logs a debug record at each sync.
func TestEtcdClientLogs(t *testing.T) {
	endpoint := startEtcd(t)
	t.Cleanup(func() { waitNoGoroutine(t, "cluster.(*etcdProvider)", 5*time.Second) })
	autoSync := cluster.WithEtcdClientConfig(func(c *clientv3.Config) { c.AutoSyncInterval = 50 * time.Millisecond })

	var fixed, memberA, memberB etcdClientRecords
	pa, err := cluster.Etcd([]string{endpoint}, cluster.WithEtcdBaseKey("/ringactor-logs"), autoSync,
		cluster.WithEtcdLogger(slog.New(&fixed)))
	if err != nil {
		t.Fatal(err)
	}
	pb, err := cluster.Etcd([]string{endpoint}, cluster.WithEtcdBaseKey("/ringactor-logs"), autoSync)
	if err != nil {
		t.Fatal(err)
	}
	startIsolatedMember(t, "etcd-logs", pa, kinds(), cluster.WithLogger(slog.New(&memberA)))
	startIsolatedMember(t, "etcd-logs", pb, kinds(), cluster.WithLogger(slog.New(&memberB)))

	deadline := time.Now().Add(5 * time.Second)
	for fixed.n.Load() == 0 || memberB.n.Load() == 0 {
		if time.Now().After(deadline) {
			t.Fatalf("etcd client records after 5s: WithEtcdLogger logger %d, member B's logger %d; want both > 0",
				fixed.n.Load(), memberB.n.Load())
		}
		time.Sleep(20 * time.Millisecond)
	}
	if n := memberA.n.Load(); n != 0 {
		t.Errorf("member A's logger got %d etcd client records; want them all on its WithEtcdLogger logger", n)
	}
}
