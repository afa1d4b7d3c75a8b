//go:build !race

package multiproc

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"

	"github.com/ringactor/ringactor/internal/testutil/testproc"
)

// A netlab is a small network of its own for one test: network namespaces
// (one per node: member, client, etcd) whose eth0 is one end of a veth
// pair, the other end on a bridge in a hub namespace. The addresses
// (10.77.0.0/24) exist only there. Each node's namespace has an nftables
// table whose input chain the test fills with drop rules (loss,
// partitions) and flushes to heal. Everything is removed at the end of
// the test, after a failure too; the names carry this process's id and a
// sequence number, so a run never meets another's, and the namespaces of
// a crashed run (its process gone) are removed when the next starts.
type netlab struct {
	t      *testing.T
	prefix string // of every namespace name: "rnf<pid>-<seq>-"
	hub    string
	nodes  []*netnode
}

// netnode is one node of a netlab.
type netnode struct {
	name string // as the test calls it: m0, c1, etcd
	ns   string // its namespace
	ip   string // its address on the bridge
}

// netnsPrefix begins every namespace a netlab creates.
const netnsPrefix = "rnf"

var netlabSeq atomic.Int64

// newNetlab returns an empty netlab, or skips the test, saying why, when
// network namespaces or nftables cannot be had (not root, no ip or nft
// command, a kernel or container that refuses them).
func newNetlab(t *testing.T) *netlab {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skipf("network namespaces and nftables need root; running as uid %d", os.Geteuid())
	}
	for _, tool := range []string{"ip", "nft"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s not found (Debian: apt-get install iproute2 nftables): %v", tool, err)
		}
	}
	removeStaleNamespaces(t)
	l := &netlab{t: t, prefix: fmt.Sprintf("%s%d-%d-", netnsPrefix, os.Getpid(), netlabSeq.Add(1))}
	l.hub = l.prefix + "hub"
	if out, err := run("ip", "netns", "add", l.hub); err != nil {
		t.Skipf("cannot create a network namespace (ip netns add): %v: %s", err, out)
	}
	t.Cleanup(l.close)
	l.must("ip", "-n", l.hub, "link", "set", "lo", "up")
	if out, err := run("ip", "-n", l.hub, "link", "add", "br0", "type", "bridge"); err != nil {
		t.Skipf("cannot create a bridge in a network namespace: %v: %s", err, out)
	}
	l.must("ip", "-n", l.hub, "link", "set", "br0", "up")
	if out, err := runIn(l.hub, nil, "nft", "add", "table", "inet", "probe"); err != nil {
		t.Skipf("nftables unavailable in a network namespace: %v: %s", err, out)
	}
	return l
}

// add creates a node: its namespace, its veth pair onto the bridge, its
// address 10.77.0.<n+2>, its nftables table.
func (l *netlab) add(name string) *netnode {
	l.t.Helper()
	n := &netnode{name: name, ns: l.prefix + name, ip: fmt.Sprintf("10.77.0.%d", len(l.nodes)+2)}
	l.must("ip", "netns", "add", n.ns)
	l.nodes = append(l.nodes, n)
	hubEnd := fmt.Sprintf("v%d", len(l.nodes))
	l.must("ip", "-n", l.hub, "link", "add", hubEnd, "type", "veth", "peer", "name", "eth0", "netns", n.ns)
	l.must("ip", "-n", l.hub, "link", "set", hubEnd, "master", "br0", "up")
	l.must("ip", "-n", n.ns, "addr", "add", n.ip+"/24", "dev", "eth0")
	l.must("ip", "-n", n.ns, "link", "set", "eth0", "up")
	l.must("ip", "-n", n.ns, "link", "set", "lo", "up")
	l.nft(n, "table inet netfault {\n chain input { type filter hook input priority 0; policy accept; }\n}\n")
	return n
}

// nft loads an nftables script in n's namespace.
func (l *netlab) nft(n *netnode, script string) {
	l.t.Helper()
	l.load(map[*netnode]string{n: script})
}

// load loads each node's nftables script in its namespace, all at once
// (one nft process per node, in parallel): a fault is in place, or
// healed, within one process start rather than one per rule.
func (l *netlab) load(scripts map[*netnode]string) {
	l.t.Helper()
	errs := make(chan error, len(scripts))
	var wg sync.WaitGroup
	for n, script := range scripts {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if out, err := runIn(n.ns, strings.NewReader(script), "nft", "-f", "-"); err != nil {
				errs <- fmt.Errorf("nft in %s: %v: %s\n%s", n.name, err, out, script)
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		l.t.Fatal(err)
	}
}

// rules collects drop rules by node, to load at once.
type rules map[*netnode]string

// drop makes to's namespace drop every packet from each of from: a one-way
// cut (to no longer hears them; they still hear it).
func (r rules) drop(to *netnode, from ...*netnode) rules {
	for _, f := range from {
		r[to] += fmt.Sprintf("add rule inet netfault input ip saddr %s drop\n", f.ip)
	}
	return r
}

// cut drops every packet between n and each of others, both ways.
func (r rules) cut(n *netnode, others ...*netnode) rules {
	r.drop(n, others...)
	for _, o := range others {
		r.drop(o, n)
	}
	return r
}

// cut drops every packet between n and each of others, both ways.
func (l *netlab) cut(n *netnode, others ...*netnode) {
	l.t.Helper()
	l.load(rules{}.cut(n, others...))
}

// partition cuts every node of each group from every node of the others.
func (l *netlab) partition(groups ...[]*netnode) {
	l.t.Helper()
	r := rules{}
	for i, g := range groups {
		for _, h := range groups[i+1:] {
			for _, n := range g {
				r.cut(n, h...)
			}
		}
	}
	l.load(r)
}

// loss makes each of nodes drop pct percent of the packets it receives
// from the bridge, at random.
func (l *netlab) loss(pct int, nodes ...*netnode) {
	l.t.Helper()
	r := rules{}
	for _, n := range nodes {
		r[n] = fmt.Sprintf("add rule inet netfault input iifname \"eth0\" numgen random mod 100 < %d drop\n", pct)
	}
	l.load(r)
}

// heal removes every drop rule.
func (l *netlab) heal() {
	l.t.Helper()
	r := rules{}
	for _, n := range l.nodes {
		r[n] = "flush chain inet netfault input\n"
	}
	l.load(r)
}

// close removes every namespace of the lab (with them their veth pairs and
// nftables tables). The test's processes, stopped by cleanups registered
// after the lab's, are gone by then.
func (l *netlab) close() {
	for _, n := range l.nodes {
		if out, err := run("ip", "netns", "del", n.ns); err != nil {
			l.t.Errorf("removing namespace %s: %v: %s", n.ns, err, out)
		}
	}
	if out, err := run("ip", "netns", "del", l.hub); err != nil {
		l.t.Errorf("removing namespace %s: %v: %s", l.hub, err, out)
	}
}

func (l *netlab) must(name string, args ...string) {
	l.t.Helper()
	if out, err := run(name, args...); err != nil {
		l.t.Fatalf("%s %s: %v: %s", name, strings.Join(args, " "), err, out)
	}
}

// startEtcd starts a single-node etcd in n's namespace, listening on n's
// address, waits until it is healthy, and returns its client endpoint; it
// is killed at the end of the test.
func (l *netlab) startEtcd(n *netnode) string {
	t := l.t
	t.Helper()
	bin, err := exec.LookPath("etcd") // startNetCluster skips without it
	if err != nil {
		t.Fatal(err)
	}
	client := n.ip + ":2379"
	peer := "http://127.0.0.1:2380"
	cmd := exec.Command("ip", "netns", "exec", n.ns, bin,
		"--name", "netfault",
		"--data-dir", t.TempDir(),
		"--listen-client-urls", "http://"+client,
		"--advertise-client-urls", "http://"+client,
		"--listen-peer-urls", peer,
		"--initial-advertise-peer-urls", peer,
		"--initial-cluster", "netfault="+peer,
		"--log-level", "warn",
	)
	var out testproc.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting etcd: %v", err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-exited
	})
	w := startProcIn(t, n.ns, "netwait", nil, netWaitEnv+"=http://"+client+"/health")
	select {
	case err := <-w.waited:
		w.ended = true
		if err != nil {
			t.Fatalf("etcd not healthy: %v: %s\n%s", err, w.stderr, out.String())
		}
	case err := <-exited:
		t.Fatalf("etcd exited: %v\n%s", err, out.String())
	}
	return client
}

// run runs a command and returns its combined output.
func run(name string, args ...string) (string, error) {
	out, err := exec.Command(name, args...).CombinedOutput()
	return string(bytes.TrimSpace(out)), err
}

// runIn runs a command in the namespace ns with stdin.
func runIn(ns string, stdin *strings.Reader, name string, args ...string) (string, error) {
	cmd := exec.Command("ip", append([]string{"netns", "exec", ns, name}, args...)...)
	if stdin != nil {
		cmd.Stdin = stdin
	}
	out, err := cmd.CombinedOutput()
	return string(bytes.TrimSpace(out)), err
}

// removeStaleNamespaces removes the namespaces of netlabs whose process is
// gone (a run that crashed or was killed before its cleanup).
func removeStaleNamespaces(t *testing.T) {
	out, err := run("ip", "netns", "list")
	if err != nil {
		return
	}
	for _, line := range strings.Split(out, "\n") {
		f := strings.Fields(line)
		if len(f) == 0 || !strings.HasPrefix(f[0], netnsPrefix) {
			continue
		}
		pidText, _, ok := strings.Cut(strings.TrimPrefix(f[0], netnsPrefix), "-")
		pid, err := strconv.Atoi(pidText)
		if !ok || err != nil || pid == os.Getpid() || !processGone(pid) {
			continue
		}
		if out, err := run("ip", "netns", "del", f[0]); err != nil {
			t.Logf("removing the stale namespace %s: %v: %s", f[0], err, out)
		} else {
			t.Logf("removed the stale namespace %s (its process %d is gone)", f[0], pid)
		}
	}
}

// processGone reports whether no process has the id pid.
func processGone(pid int) bool {
	return errors.Is(syscall.Kill(pid, 0), syscall.ESRCH)
}
