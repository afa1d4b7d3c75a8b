//go:build !race

// The network-fault tests run without -race (./test.sh runs them in its
// step without the race detector), as the churn test does: member, client
// and etcd processes under load, faults held for seconds, on two shared
// cores. The members' and clients' code runs under -race in the other
// tests of this package.

package multiproc

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ringactor/ringactor/cluster"
)

// netLongEnv set to 1 runs the network-fault tests at their long size
// (more identities and workers, every fault held 20 s, more faults); the
// default is the CI size. docs/cluster.md gives the command and its
// figures.
const netLongEnv = "RINGACTOR_NETFAULT_LONG"

// netSlack is how far past its deadline a request may end.
const netSlack = 500 * time.Millisecond

// netSizes are the sizes of a network-fault run.
type netSizes struct {
	long       bool
	identities int
	workers    int // per client
	hold       time.Duration
}

func netSize() netSizes {
	if os.Getenv(netLongEnv) == "1" {
		return netSizes{long: true, identities: 200, workers: 8, hold: 20 * time.Second}
	}
	return netSizes{identities: 24, workers: 4, hold: 5 * time.Second}
}

// netCluster is a cluster of member processes and client processes, each
// in a network namespace of its own, with etcd in one of its own when the
// cluster uses the etcd provider.
type netCluster struct {
	t        *testing.T
	lab      *netlab
	provider string
	etcd     *netnode
	members  []*netnode
	mprocs   []*proc
	addrs    []string
	clients  []*netnode
	cprocs   []*proc
	dir      string
	size     netSizes
}

// startNetCluster starts etcd (provider "etcd"), nMembers members and
// nClients clients in a new netlab, and waits until every client has had
// an answer from every identity.
func startNetCluster(t *testing.T, provider string, nMembers, nClients int) *netCluster {
	t.Helper()
	if _, err := exec.LookPath("etcd"); provider == "etcd" && err != nil {
		t.Skipf("etcd not found in PATH (Debian: apt-get install etcd-server): %v", err)
	}
	c := &netCluster{t: t, lab: newNetlab(t), provider: provider, dir: t.TempDir(), size: netSize()}
	if d := os.Getenv(logDirEnv); d != "" {
		c.dir = d
	}
	// Registered after the lab's cleanup and before the processes' (which
	// stop them first): on a failure, every process's stderr and the end
	// of its log.
	t.Cleanup(c.dumpOnFailure)
	common := []string{eventsEnv + "=" + c.dir, logDirEnv + "=" + c.dir}
	if provider == "etcd" {
		c.etcd = c.lab.add("etcd")
		common = append(common, etcdEnv+"="+c.lab.startEtcd(c.etcd))
	}
	for i := range nMembers {
		n := c.lab.add(fmt.Sprintf("m%d", i))
		// The member binds loopback in its namespace, behind its delay
		// proxy on the namespace's address (which it advertises): no
		// delay until a phase sets one.
		p := startProcIn(t, n.ns, "member", c.addrs, append(common, bindEnv+"=127.0.0.1:7001", proxyEnv+"="+n.ip+":7000")...)
		a := p.expect(t, "ADDR ", 30*time.Second)
		p.name = "member " + a
		c.members, c.mprocs, c.addrs = append(c.members, n), append(c.mprocs, p), append(c.addrs, a)
	}
	for i := range nClients {
		n := c.lab.add(fmt.Sprintf("c%d", i))
		p := startProcIn(t, n.ns, "netfault", c.addrs, append(common,
			bindEnv+"="+n.ip+":7000",
			netOutEnv+"="+c.clientFile(i),
			netIdentitiesEnv+"="+strconv.Itoa(c.size.identities),
			netWorkersEnv+"="+strconv.Itoa(c.size.workers),
			netMembersEnv+"="+strconv.Itoa(nMembers))...)
		p.name = "client " + n.name
		c.clients, c.cprocs = append(c.clients, n), append(c.cprocs, p)
	}
	for _, p := range c.cprocs {
		p.expect(t, "READY", 120*time.Second)
	}
	t.Logf("%s provider: %d members, %d clients (%d workers each), %d identities", provider, nMembers, nClients, c.size.workers, c.size.identities)
	return c
}

// dumpOnFailure logs, when the test failed, each member's and client's
// stderr and the last lines of its log (member-PID.log in c.dir): a
// failure seen in one process often has its cause in another.
func (c *netCluster) dumpOnFailure() {
	if !c.t.Failed() {
		return
	}
	for _, p := range append(slices.Clone(c.mprocs), c.cprocs...) {
		log := "(no log)"
		if b, err := os.ReadFile(filepath.Join(c.dir, fmt.Sprintf("member-%d.log", p.cmd.Process.Pid))); err == nil {
			lines := strings.Split(strings.TrimSpace(string(b)), "\n")
			log = strings.Join(lines[max(0, len(lines)-30):], "\n")
		}
		c.t.Logf("%s (pid %d) stderr:\n%s\nthe end of its log:\n%s", p.name, p.cmd.Process.Pid, p.stderr, log)
	}
}

// delay sets the delay of member i's proxy: everything it receives from
// the other members and the clients, and what it sends back on those
// connections, arrives that much later.
func (c *netCluster) delay(i int, d time.Duration) {
	c.t.Helper()
	c.mprocs[i].send(c.t, "delay "+d.String())
	c.mprocs[i].expect(c.t, "DELAYED ", 10*time.Second)
}

func (c *netCluster) clientFile(i int) string {
	return filepath.Join(c.dir, fmt.Sprintf("netclient%d", i))
}

// netPhase is one fault: applied, held while the load runs, healed.
type netPhase struct {
	name   string
	apply  func(c *netCluster)
	undo   func(c *netCluster) // at the heal, besides flushing the drop rules; may be nil
	hold   time.Duration
	victim int // the member whose fence is checked; -1: none
}

// netPhaseResult is what was seen of a phase.
type netPhaseResult struct {
	netPhase
	fault, heal int64           // unix ns
	recovered   []time.Duration // by client: the last identity's first answer after the heal
}

// runPhase applies the phase's fault, holds it, heals it and waits until
// every client has had an answer from every identity again.
func (c *netCluster) runPhase(ph netPhase) netPhaseResult {
	t := c.t
	t.Helper()
	r := netPhaseResult{netPhase: ph, fault: time.Now().UnixNano()}
	ph.apply(c)
	applied := time.Duration(time.Now().UnixNano() - r.fault)
	<-time.After(ph.hold) // the fault lasts this long; the load runs meanwhile
	healStart := time.Now().UnixNano()
	c.lab.heal()
	if ph.undo != nil {
		ph.undo(c)
	}
	r.heal = time.Now().UnixNano()
	for _, p := range c.cprocs {
		p.send(t, fmt.Sprintf("HEAL %d", r.heal))
	}
	for _, p := range c.cprocs {
		f := strings.Fields(p.expect(t, "RECOVERED ", netRecoverFor+30*time.Second))
		ns, _ := strconv.ParseInt(f[0], 10, 64)
		if ns < 0 {
			t.Errorf("%s: after the heal of %s, identities %s did not answer within %v:\n%s", p.name, ph.name, strings.Join(f[1:], " "), netRecoverFor, p.stderr)
		}
		r.recovered = append(r.recovered, time.Duration(ns))
	}
	t.Logf("%s: in place in %v, held %v, healed in %v; every identity answered every client again %v after the heal",
		ph.name, applied.Round(time.Millisecond), ph.hold, time.Duration(r.heal-healStart).Round(time.Millisecond), r.recovered)
	return r
}

// netRecord is one request of a network-fault client.
type netRecord struct {
	id, act    string
	send, recv int64
	class      string
}

// stop stops the clients and the members and returns the clients'
// records.
func (c *netCluster) stop() []netRecord {
	t := c.t
	t.Helper()
	total := 0
	for _, p := range c.cprocs {
		p.send(t, "STOP")
		var res netResult
		if err := json.Unmarshal([]byte(p.expect(t, "RESULT ", 60*time.Second)), &res); err != nil {
			t.Fatal(err)
		}
		total += res.Requests
	}
	for _, p := range c.cprocs {
		p.stop(t)
	}
	for _, p := range c.mprocs {
		p.signal()
	}
	for _, p := range c.mprocs {
		p.stop(t)
	}
	var recs []netRecord
	for i := range c.cprocs {
		recs = append(recs, readNetRecords(t, c.clientFile(i))...)
	}
	if len(recs) != total {
		t.Errorf("%d records, the clients reported %d requests", len(recs), total)
	}
	return recs
}

func readNetRecords(t *testing.T, path string) []netRecord {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []netRecord
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var r netRecord
		if _, err := fmt.Sscanf(sc.Text(), "%s %s %d %d %s", &r.id, &r.act, &r.send, &r.recv, &r.class); err != nil {
			t.Fatalf("%s: %q: %v", path, sc.Text(), err)
		}
		out = append(out, r)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// checkOutcomes checks that every request ended once, with its reply or a
// typed error, within its deadline (and netSlack), and returns the count
// of each outcome.
func checkOutcomes(t *testing.T, recs []netRecord) map[string]int {
	t.Helper()
	classes := map[string]int{}
	bad := 0
	for _, r := range recs {
		classes[r.class]++
		late := time.Duration(r.recv - r.send)
		if strings.HasPrefix(r.class, "untyped:") || late > netDeadline+bound(netSlack) {
			if bad++; bad <= 20 {
				t.Errorf("%s: %s after %v (deadline %v)", r.id, r.class, late, netDeadline)
			}
		}
	}
	if bad > 20 {
		t.Errorf("… and %d more requests untyped or late", bad-20)
	}
	return classes
}

// classesIn counts the outcomes of the requests sent in [from, till].
func classesIn(recs []netRecord, from, till int64) string {
	classes := map[string]int{}
	for _, r := range recs {
		if r.send >= from && r.send <= till {
			classes[r.class]++
		}
	}
	return summarize(classes)
}

func summarize(classes map[string]int) string {
	keys := make([]string, 0, len(classes))
	for k := range classes {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var parts []string
	for _, k := range keys {
		parts = append(parts, fmt.Sprintf("%s=%d", k, classes[k]))
	}
	return strings.Join(parts, " ")
}

// split is what a phase did to single activation: the pairs of
// activations of one identity that served at once, how many identities
// they touch, and when.
type split struct {
	pairs, ids  int
	first, last int64         // unix ns: the first pair's start, the last one's end
	longest     time.Duration // the longest time one pair served at once
}

// splitOf summarizes the overlaps that begin within [from, till).
func splitOf(ov []overlap, from, till int64) split {
	var sp split
	seen := map[string]bool{}
	for _, o := range ov {
		if o.from < from || o.from >= till {
			continue
		}
		sp.pairs++
		seen[o.id] = true
		if sp.first == 0 || o.from < sp.first {
			sp.first = o.from
		}
		sp.last = max(sp.last, o.till)
		sp.longest = max(sp.longest, time.Duration(o.till-o.from))
	}
	sp.ids = len(seen)
	return sp
}

// netSplitGuard is how long after the heal the peers provider's split
// may last (the sides rejoin as new incarnations within a few heartbeats;
// measured: under 1 s).
const netSplitGuard = 10 * time.Second

// report checks and logs what the phases did to the requests and the
// activations. Every request must end once, with its reply or a typed
// error, within its deadline. With etcd no identity may ever have had two
// serving activations, and a phase's victim must have stopped serving
// within its lease TTL and margin of the fault. With peers (no quorum)
// two activations of an identity may serve at once only within a phase's
// partition window: from a failure timeout after its fault (no member
// drops another sooner) to netSplitGuard after its heal; never before
// the first fault, never after the split healed.
func (c *netCluster) report(phases []netPhaseResult, recs []netRecord) {
	t := c.t
	t.Helper()
	classes := checkOutcomes(t, recs)
	spans := readSpans(t, c.dir)
	ov := doubles(spans)
	acts := 0
	for _, ss := range spans {
		acts += len(ss)
	}
	t.Logf("%d requests: %s; %d activations of %d identities; %d pairs of activations serving at once", len(recs), summarize(classes), acts, len(spans), len(ov))
	if len(phases) > 0 {
		if sp := splitOf(ov, 0, phases[0].fault); sp.pairs > 0 {
			t.Errorf("before any fault: %d identities had two serving activations (%d pairs)", sp.ids, sp.pairs)
		}
	}
	for i, ph := range phases {
		next := int64(1<<63 - 1)
		if i+1 < len(phases) {
			next = phases[i+1].fault
		}
		end := ph.heal + int64(slices.Max(ph.recovered))
		msg := fmt.Sprintf("%s: requests sent from the fault to the recovery: %s", ph.name, classesIn(recs, ph.fault, end))
		sp := splitOf(ov, ph.fault, next)
		if sp.pairs > 0 {
			msg += fmt.Sprintf("; SPLIT %d of %d identities (%d pairs of activations) served twice at once, the first from %v after the fault, the last until %v after the heal (longest pair %v)",
				sp.ids, c.size.identities, sp.pairs, time.Duration(sp.first-ph.fault).Round(time.Millisecond),
				time.Duration(sp.last-ph.heal).Round(time.Millisecond), sp.longest.Round(time.Millisecond))
			if c.provider == "peers" {
				if d := time.Duration(sp.first - ph.fault); d < cluster.DefaultFailureTimeout {
					t.Errorf("%s: two activations of an identity served at once %v after the fault, sooner than the failure timeout (%v)", ph.name, d, cluster.DefaultFailureTimeout)
				}
				if d := time.Duration(sp.last - ph.heal); d > bound(netSplitGuard) {
					t.Errorf("%s: two activations of an identity still served at once %v after the heal (guard %v)", ph.name, d, bound(netSplitGuard))
				}
			}
		} else {
			msg += "; no identity with two serving activations"
		}
		if ph.victim >= 0 {
			addr := c.addrs[ph.victim]
			if at, ok := lastServedOn(spans, addr, ph.fault, ph.heal); ok {
				d := time.Duration(at - ph.fault)
				msg += fmt.Sprintf("; %s last served %v after the fault", c.members[ph.victim].name, d.Round(time.Millisecond))
				if limit := cluster.EtcdLeaseTTL + bound(netSlack); c.provider == "etcd" && d > limit {
					t.Errorf("%s: %s (%s) served %v after the fault, past its lease TTL and margin (%v)", ph.name, c.members[ph.victim].name, addr, d, limit)
				}
			} else {
				msg += fmt.Sprintf("; %s served nothing after the fault", c.members[ph.victim].name)
			}
		}
		t.Log(msg)
	}
	if c.provider == "etcd" {
		for i, o := range ov {
			if i == 20 {
				t.Errorf("… and %d more", len(ov)-20)
				break
			}
			t.Errorf("%s: activations %s and %s both served for %v from %s", o.id, o.a, o.b, time.Duration(o.till-o.from), time.Unix(0, o.from).Format("15:04:05.000"))
		}
	}
}

// netDelay is the delay phases' latency: more than the peers provider's
// failure timeout, so that greetings arrive too late.
const netDelay = 2 * time.Second

// Phases shared by both providers' tests (m: the members, cl: the
// clients).
func cutSomePhase(hold time.Duration) netPhase {
	return netPhase{name: "cut from some peers (m0 from m1 only; m2 reaches both)", hold: hold, victim: -1,
		apply: func(c *netCluster) { c.lab.cut(c.members[0], c.members[1]) }}
}

func delayPhase(hold time.Duration) netPhase {
	return netPhase{name: fmt.Sprintf("delay (everything m0 receives from members and clients %v late)", netDelay), hold: hold, victim: -1,
		apply: func(c *netCluster) { c.delay(0, netDelay) },
		undo:  func(c *netCluster) { c.delay(0, 0) }}
}

func lossPhase(c *netCluster, hold time.Duration) netPhase {
	nodes := append(slices.Clone(c.members), c.clients...)
	if c.etcd != nil {
		nodes = append(nodes, c.etcd)
	}
	return netPhase{name: "20% loss (every node drops a fifth of what it receives)", hold: hold, victim: -1,
		apply: func(c *netCluster) { c.lab.loss(20, nodes...) }}
}

// TestNetFaultEtcd runs three members on the etcd provider and two
// clients, each in a network namespace of its own, etcd in another, and
// puts them through real network faults, one after the other, each held
// while the clients' load runs and then healed: a member cut off from
// everyone but one client, from etcd only, one that can no longer send to
// etcd and the members (one way), one cut off from one peer only, one
// whose traffic is delayed past the failure timeout, and 20% packet loss
// everywhere. Checked: no identity ever has two activations serving at
// once (from the members' activation events); the cut-off member stops
// serving within its lease TTL and margin of the fault; every request
// ends once, with its reply or a typed error, within its deadline; after
// each heal every identity answers both clients again.
func TestNetFaultEtcd(t *testing.T) {
	c := startNetCluster(t, "etcd", 3, 2)
	m, cl, lab, hold := c.members, c.clients, c.lab, c.size.hold
	phases := []netPhase{
		{name: "isolated (m0 cut off from m1, m2, etcd and c1; c0 still reaches it)", hold: hold, victim: 0,
			apply: func(*netCluster) { lab.cut(m[0], m[1], m[2], c.etcd, cl[1]) }},
		{name: "cut off from etcd only (m0)", hold: hold, victim: 0,
			apply: func(*netCluster) { lab.cut(m[0], c.etcd) }},
		{name: "one-way (m0's packets to etcd, m1 and m2 dropped; theirs reach it)", hold: hold, victim: 0,
			apply: func(*netCluster) { lab.load(rules{}.drop(c.etcd, m[0]).drop(m[1], m[0]).drop(m[2], m[0])) }},
		cutSomePhase(hold),
		delayPhase(hold),
		lossPhase(c, hold),
	}
	var results []netPhaseResult
	for _, ph := range phases {
		results = append(results, c.runPhase(ph))
	}
	c.report(results, c.stop())
}

// TestNetFaultPeers runs three members on the peers provider (no quorum)
// and two clients in network namespaces and partitions them: {m0, c0}
// from {m1, m2, c1} for longer than the failure timeout and the suspect
// window, so that each side drops the other and activates the identities
// its client asks for, then heals; then cuts m0 from m1 only, and delays
// m0's traffic past the failure timeout. Measured: how long each split
// lasts (two activations of an identity serving at once) and how many
// identities it touches, and how long after the heal every identity
// answers again. Checked: every request ends once, with its reply or a
// typed error, within its deadline; two activations serve at once only
// within a fault's window (a failure timeout after it to netSplitGuard
// after its heal); after each heal every identity answers both clients
// again.
func TestNetFaultPeers(t *testing.T) {
	c := startNetCluster(t, "peers", 3, 2)
	m, cl, lab := c.members, c.clients, c.lab
	hold, short := 12*time.Second, 6*time.Second // the partition's: past the failure timeout and the suspect window
	if c.size.long {
		hold, short = c.size.hold, c.size.hold
	}
	phases := []netPhase{
		{name: "partition ({m0, c0} | {m1, m2, c1})", hold: hold, victim: -1,
			apply: func(*netCluster) { lab.partition([]*netnode{m[0], cl[0]}, []*netnode{m[1], m[2], cl[1]}) }},
		cutSomePhase(short),
		delayPhase(short),
	}
	if c.size.long {
		phases = append(phases,
			netPhase{name: "isolated (m0 cut off from m1, m2 and c1; c0 still reaches it)", hold: hold, victim: 0,
				apply: func(*netCluster) { lab.cut(m[0], m[1], m[2], cl[1]) }},
			lossPhase(c, hold))
	}
	var results []netPhaseResult
	for _, ph := range phases {
		results = append(results, c.runPhase(ph))
	}
	c.report(results, c.stop())
}
