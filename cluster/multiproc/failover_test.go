package multiproc

import (
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/ringactor/ringactor/cluster"
)

// TestBuiltinKindsAcrossProcesses calls echo and add in their JSON form on
// identities spread over three member processes, from a client process.
func TestBuiltinKindsAcrossProcesses(t *testing.T) {
	_, addrs := startMembers(t, 3)
	client := startProc(t, "builtin", addrs[:1])
	var res builtinResult
	if err := json.Unmarshal([]byte(client.expect(t, "RESULT ", 60*time.Second)), &res); err != nil {
		t.Fatal(err)
	}
	client.stop(t) // it closes its client and exits by itself
	for _, e := range res.Errors {
		t.Error(e)
	}
}

// TestFailover runs steady load from a client process over 200 identities
// on three member processes, kills one member with SIGKILL, and checks that
// every request ended with a reply or a typed error within its deadline,
// that the dead member's identities answered again from the survivors
// within 10 s, and that once they did every request succeeded.
func TestFailover(t *testing.T) {
	if testing.Short() {
		t.Skip("starts four processes")
	}
	failover(t, nil)
}

// TestEtcdLeaseExpiry is TestFailover with the etcd provider: the killed
// member cannot deregister, so the others drop it from their topology only
// when its lease (cluster.EtcdLeaseTTL) expires; then its identities
// activate on the survivors.
func TestEtcdLeaseExpiry(t *testing.T) {
	if testing.Short() {
		t.Skip("starts five processes")
	}
	res := failover(t, []string{etcdEnv + "=" + startEtcd(t)})
	dropped := time.Duration(res.DroppedNs)
	t.Logf("the client's topology dropped the killed member %v after the kill (lease TTL %v)", dropped, cluster.EtcdLeaseTTL)
	if dropped == 0 || dropped > bound(cluster.EtcdLeaseTTL+3*time.Second) {
		t.Errorf("the killed member was dropped %v after the kill; want once its lease of %v expired", dropped, cluster.EtcdLeaseTTL)
	}
}

// failover runs the failover scenario with the members' and client's extra
// environment env and checks it; it returns the client's result.
func failover(t *testing.T, env []string) failoverResult {
	members, addrs := startMembers(t, 3, env...)
	client := startProc(t, "failover", addrs[:1], env...)
	var owners map[string]string
	if err := json.Unmarshal([]byte(client.expect(t, "OWNERS ", 60*time.Second)), &owners); err != nil {
		t.Fatal(err)
	}
	victim := 1
	hosted := 0
	for _, o := range owners {
		if o == addrs[victim] {
			hosted++
		}
	}
	if hosted == 0 || hosted == len(owners) {
		t.Fatalf("%d of %d identities on the victim: disthash did not spread them", hosted, len(owners))
	}
	members[victim].kill(t) // SIGKILL, then reaped
	client.send(t, fmt.Sprintf("KILLED %s %d", addrs[victim], time.Now().UnixNano()))
	var res failoverResult
	if err := json.Unmarshal([]byte(client.expect(t, "RESULT ", 60*time.Second)), &res); err != nil {
		t.Fatal(err)
	}
	client.stop(t)
	t.Logf("killed %s, which hosted %d of %d identities; load: %d ok, %d typed errors; %d/%d recovered, the last %v after the kill",
		addrs[victim], res.Victims, len(owners), res.OK, res.Typed, res.Recovered, res.Victims, time.Duration(res.WorstNs))
	if res.Victims != hosted {
		t.Errorf("client counted %d identities on the victim, the parent %d", res.Victims, hosted)
	}
	if res.Recovered != res.Victims || time.Duration(res.WorstNs) > bound(recoveryLimit) {
		t.Errorf("%d of %d identities of the killed member answered again within %v", res.Recovered, res.Victims, bound(recoveryLimit))
	}
	for _, e := range res.Untyped {
		t.Errorf("untyped error: %s", e)
	}
	for _, s := range res.Slow {
		t.Errorf("past its deadline: %s", s)
	}
	for _, e := range res.After {
		t.Errorf("after recovery: %s", e)
	}
	if res.FromDead > 0 {
		t.Errorf("after recovery %d replies came from the killed member", res.FromDead)
	}
	return res
}
