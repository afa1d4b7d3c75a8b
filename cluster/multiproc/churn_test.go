//go:build !race

// The churn test runs without -race (./test.sh runs it in its step
// without the race detector): a dozen member processes under the race
// detector are more than the CI's two cores carry. The members' and
// clients' code runs under -race in the other tests of this package.

package multiproc

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"
)

// Sizes of the churn test, from the environment; the defaults are the CI
// variant, sized for two shared cores. The full run:
//
//	RINGACTOR_CHURN_MEMBERS=12 RINGACTOR_CHURN_CLIENTS=4 RINGACTOR_CHURN_IDENTITIES=500 \
//	  go test -count=1 -v -run TestChurn ./cluster/multiproc/
//
// and the same with RINGACTOR_CHURN_PROVIDER=etcd for the etcd provider
// (a local etcd is started; etcd must be on PATH). With
// RINGACTOR_MULTIPROC_LOGDIR=<folder> every member writes its log there and
// the clients' records stay there, to read after a failed run.
const (
	churnClientsEnv  = "RINGACTOR_CHURN_CLIENTS"
	churnKillsEnv    = "RINGACTOR_CHURN_KILLS"
	churnProviderEnv = "RINGACTOR_CHURN_PROVIDER"
	// churnPause is how long the load runs between two steps of the roll.
	churnPause = 500 * time.Millisecond
	// churnSlack is how far past its deadline a request may end (the
	// reply travelling, the processes sharing two cores).
	churnSlack = 500 * time.Millisecond
)

// churnRecord is one request of a churn client.
type churnRecord struct {
	id, act    string
	count      int64
	send, recv int64
	class      string
}

// TestChurn runs member processes and client processes driving the
// counter kind, rolls every member (SIGTERM, restart on the same address)
// and SIGKILLs some of them during the roll (restarted after their
// identities have recovered), and checks: every request got its reply or a
// typed error within its deadline; no identity had two activations at once
// (no activation answered both before and after another activation of the
// same identity answered); the killed members' identities answered again
// from a survivor within 3 s of the kill (5 s with etcd, whose lease
// expires first); every gracefully stopped member left no goroutine behind.
func TestChurn(t *testing.T) {
	nMembers := envInt(churnMembersEnv, 4)
	nClients := envInt(churnClientsEnv, 2)
	nIDs := envInt(churnIdentitiesEnv, 100)
	nKills := min(envInt(churnKillsEnv, 2), nMembers)
	recoveryLimit := 3 * time.Second
	var common []string
	if os.Getenv(churnProviderEnv) == "etcd" {
		common = append(common, etcdEnv+"="+startEtcd(t))
		recoveryLimit = 5 * time.Second
	}
	common = append(common, churnMembersEnv+"="+strconv.Itoa(nMembers), leakEnv+"=1")
	t.Logf("%d members, %d clients, %d identities, %d SIGKILLs, provider %q", nMembers, nClients, nIDs, nKills, os.Getenv(churnProviderEnv))

	members := make([]*proc, nMembers)
	addrs := make([]string, nMembers)
	startMember := func(i int, bind string) {
		// Every member has simulated devices (1 or 2, alternately), so
		// the device kind of the mix (devpref) runs on them, weighted. (A
		// member that had compiled a ring program once died of the roll's
		// SIGTERM: NVRTC dropped SA_ONSTACK from Go's handler; see
		// gpu/cuda's TestNVRTCKeepsGoSignalHandlers.)
		env := append(slices.Clone(common), simDevicesEnv+"="+strconv.Itoa(i%2+1))
		if bind != "" {
			env = append(env, bindEnv+"="+bind)
		}
		var seeds []string // the others that run (or ran) before it
		for j, a := range addrs {
			if j != i && a != "" {
				seeds = append(seeds, a)
			}
		}
		p := startProc(t, "member", seeds, env...)
		a := p.expect(t, "ADDR ", 30*time.Second)
		if bind != "" && a != bind {
			t.Fatalf("member restarted at %s, want %s", a, bind)
		}
		p.name = "member " + a
		members[i], addrs[i] = p, a
	}
	for i := range nMembers {
		startMember(i, "")
	}
	dir := t.TempDir()
	if d := os.Getenv(logDirEnv); d != "" {
		dir = d
	}
	clients := make([]*proc, nClients)
	for i := range clients {
		clients[i] = startProc(t, "churn", addrs, append(common,
			churnOutEnv+"="+filepath.Join(dir, fmt.Sprintf("client%d", i)),
			churnIdentitiesEnv+"="+strconv.Itoa(nIDs))...)
	}
	for _, c := range clients {
		c.expect(t, "READY", 120*time.Second)
	}

	// Which steps of the roll are SIGKILLs: spread over the roll.
	kill := map[int]bool{}
	for k := range nKills {
		kill[(k+1)*nMembers/(nKills+1)] = true
	}
	pause := func() { <-time.After(churnPause) } // the load runs meanwhile
	for i := range nMembers {
		pause()
		addr := addrs[i]
		if kill[i] {
			members[i].kill(t)
			at := time.Now()
			for _, c := range clients {
				c.send(t, fmt.Sprintf("KILLED %s %d", addr, at.UnixNano()))
			}
			for _, c := range clients {
				f := strings.Fields(c.expect(t, "RECOVERY ", 30*time.Second))
				got, _ := strconv.Atoi(f[1])
				victims, _ := strconv.Atoi(f[2])
				worst, _ := strconv.ParseInt(f[3], 10, 64)
				t.Logf("killed %s: %s saw %d/%d of its identities answer again, the last %v after the kill", addr, c.name, got, victims, time.Duration(worst))
				if got != victims || time.Duration(worst) > bound(recoveryLimit) {
					t.Errorf("killed %s: %d of %d identities answered again, the last after %v; want all within %v; %s's stderr:\n%s",
						addr, got, victims, time.Duration(worst), bound(recoveryLimit), c.name, c.stderr)
				}
			}
		} else {
			members[i].signal()
			members[i].stop(t)
		}
		startMember(i, addr)
	}
	pause()
	total := 0
	for _, c := range clients {
		c.send(t, "STOP")
		var res churnResult
		if err := json.Unmarshal([]byte(c.expect(t, "RESULT ", 60*time.Second)), &res); err != nil {
			t.Fatal(err)
		}
		c.stop(t)
		total += res.Requests
	}
	for _, m := range members {
		m.signal()
	}
	for _, m := range members {
		m.stop(t)
	}
	var recs []churnRecord
	for i := range clients {
		recs = append(recs, readChurnRecords(t, filepath.Join(dir, fmt.Sprintf("client%d", i)))...)
	}
	if len(recs) != total {
		t.Errorf("%d records, the clients reported %d requests", len(recs), total)
	}
	checkChurn(t, recs)
}

func readChurnRecords(t *testing.T, path string) []churnRecord {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []churnRecord
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var r churnRecord
		if _, err := fmt.Sscanf(sc.Text(), "%s %s %d %d %d %s", &r.id, &r.act, &r.count, &r.send, &r.recv, &r.class); err != nil {
			t.Fatalf("%s: %q: %v", path, sc.Text(), err)
		}
		out = append(out, r)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// checkChurn checks the records of every client.
func checkChurn(t *testing.T, recs []churnRecord) {
	t.Helper()
	classes := map[string]int{}
	byID := map[string][]churnRecord{}
	devices := map[string]int{}
	var failures []string
	fail := func(format string, a ...any) {
		if len(failures) < 20 {
			failures = append(failures, fmt.Sprintf(format, a...))
		}
	}
	deadline := int64(churnDeadline + bound(churnSlack))
	for _, r := range recs {
		classes[r.class]++
		if strings.HasPrefix(r.class, "untyped:") || r.class == "mismatch" {
			fail("%s: %s", r.id, r.class)
		}
		if r.recv-r.send > deadline {
			fail("%s: ended %v after it was sent (%s)", r.id, time.Duration(r.recv-r.send), r.class)
		}
		if r.class == "ok" && isDeviceID(r.id) {
			// The device kind's reply names its member and device, not
			// its activation: the overlap check cannot apply. Every
			// member has a simulated device: each answers from one.
			devices[r.act]++
			if !strings.Contains(r.act, "/cuda:sim") && simDevicesBuilt {
				fail("%s: device-preferred identity answered from %s, not a device", r.id, r.act)
			}
			continue
		}
		if r.class == "ok" {
			byID[r.id] = append(byID[r.id], r)
		}
	}
	t.Logf("device kind (devpref) replies by member and device: %v", devices)
	forks := 0
	for id, rs := range byID {
		if f := overlapping(rs); f != "" {
			forks++
			fail("%s: two activations at once: %s", id, f)
		}
	}
	keys := make([]string, 0, len(classes))
	for k := range classes {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var summary []string
	for _, k := range keys {
		summary = append(summary, fmt.Sprintf("%s=%d", k, classes[k]))
	}
	t.Logf("%d requests over %d identities: %s; identities with two activations at once: %d", len(recs), len(byID), strings.Join(summary, " "), forks)
	for _, f := range failures {
		t.Error(f)
	}
}

// overlapping returns a description of two activations of one identity
// that were active at once, or "": an activation A that answered a request
// before another activation B answered one (A's reply arrived before B's
// request was sent) and answered another after it (A's request was sent
// after B's reply arrived) held the identity while B handled its request.
func overlapping(rs []churnRecord) string {
	type span struct{ firstRecv, lastSend int64 }
	spans := map[string]*span{}
	for _, r := range rs {
		s := spans[r.act]
		if s == nil {
			s = &span{firstRecv: r.recv, lastSend: r.send}
			spans[r.act] = s
		}
		s.firstRecv = min(s.firstRecv, r.recv)
		s.lastSend = max(s.lastSend, r.send)
	}
	for _, b := range rs {
		for act, a := range spans {
			if act != b.act && a.firstRecv < b.send && a.lastSend > b.recv {
				return fmt.Sprintf("%s answered before and after %s answered count %d", act, b.act, b.count)
			}
		}
	}
	return ""
}
