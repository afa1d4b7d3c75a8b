//go:build !race

package cluster_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/ringactor/ringactor/actors"
	"github.com/ringactor/ringactor/cluster"
	"github.com/ringactor/ringactor/internal/wire"
	"github.com/ringactor/ringactor/messages"
)

// bump is the request of the tally kind; tallied its reply.
type bump struct{}
type tallied struct {
	Count  int64
	Member string // the address of the member whose activation answered
}

func init() {
	messages.MustRegister[bump]("ringactor.cluster.test.Bump")
	messages.MustRegister[tallied]("ringactor.cluster.test.Tallied")
}

// tally is a stateful kind's activation: a count handed over as 8 bytes.
type tally struct {
	count  int64
	member func() string
}

func (t *tally) Handle(context.Context, bump) (tallied, error) {
	t.count++
	return tallied{Count: t.count, Member: t.member()}, nil
}

func (t *tally) Passivate() ([]byte, error) {
	return binary.BigEndian.AppendUint64(nil, uint64(t.count)), nil
}

// tallyKind declares the tally kind; member names the hosting member.
func tallyKind(member func() string) *cluster.Kind {
	return cluster.NewStatefulKind("tally", func(_ string, state []byte) (cluster.Stateful[bump, tallied], error) {
		t := &tally{member: member}
		if state != nil {
			if len(state) != 8 {
				return nil, fmt.Errorf("state of %d bytes", len(state))
			}
			t.count = int64(binary.BigEndian.Uint64(state))
		}
		return t, nil
	})
}

// tallyMember starts a member of the cluster name hosting the tally kind.
func tallyMember(t *testing.T, name string, seeds []string, opts ...cluster.Option) *cluster.Member {
	t.Helper()
	var (
		mu   sync.Mutex
		addr string
	)
	k := tallyKind(func() string { mu.Lock(); defer mu.Unlock(); return addr })
	m := startIsolatedMember(t, name, cluster.Peers(seeds), []*cluster.Kind{k}, opts...)
	mu.Lock()
	addr = m.Address()
	mu.Unlock()
	return m
}

// bumpAll bumps every identity once from m and returns the replies.
func bumpAll(t *testing.T, ctx context.Context, m *cluster.Member, ids []string) map[string]tallied {
	t.Helper()
	out := make(map[string]tallied, len(ids))
	for _, id := range ids {
		r, err := cluster.Request[tallied](ctx, m, "tally", id, bump{})
		if err != nil {
			t.Fatalf("%s: %v", id, err)
		}
		out[id] = r
	}
	return out
}

// TestStateMovesWithIdentity: identities of a stateful kind keep their
// count when a member joins (the identities it now owns are passivated on
// their old owner, which hands their state over, before they activate on
// it) and when it leaves gracefully (it sends the states to the next
// owners); at no point do two members hold the same identity.
func TestStateMovesWithIdentity(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	ids := make([]string, 40)
	for i := range ids {
		ids[i] = fmt.Sprintf("t%02d", i)
	}
	a := tallyMember(t, "moves", nil)
	for round := int64(1); round <= 2; round++ {
		for id, r := range bumpAll(t, ctx, a, ids) {
			if r.Count != round || r.Member != a.Address() {
				t.Fatalf("%s: %+v in round %d on one member", id, r, round)
			}
		}
	}
	b := tallyMember(t, "moves", []string{a.Address()})
	waitTopology(t, a, 2)
	waitTopology(t, b, 2)
	onB := 0
	for id, r := range bumpAll(t, ctx, a, ids) {
		if r.Count != 3 {
			t.Errorf("%s: count %d after a member joined, want 3 (state handed over)", id, r.Count)
		}
		if r.Member == b.Address() {
			onB++
		}
	}
	if onB == 0 || onB == len(ids) {
		t.Fatalf("%d of %d identities on the new member", onB, len(ids))
	}
	if n := a.Activations() + b.Activations(); n != len(ids) {
		t.Errorf("%d activations on the two members (%d + %d), want %d: one per identity", n, a.Activations(), b.Activations(), len(ids))
	}
	closeMember(t, b)
	for id, r := range bumpAll(t, ctx, a, ids) {
		if r.Count != 4 || r.Member != a.Address() {
			t.Errorf("%s: %+v after the member left, want count 4 on %s", id, r, a.Address())
		}
	}
}

// TestPlacementRedirectsToOwner: a member asked for an identity it does
// not own by its own topology does not activate it; it answers with a
// redirect to the owner. Clients that know one member each (partial views)
// all reach the one activation of each identity.
func TestPlacementRedirectsToOwner(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	a := tallyMember(t, "redirect", nil)
	b := tallyMember(t, "redirect", []string{a.Address()})
	c := tallyMember(t, "redirect", []string{b.Address()})
	for _, m := range []*cluster.Member{a, b, c} {
		waitTopology(t, m, 3)
	}
	// Raw placement requests: for each identity, the two members that do
	// not own it redirect to the one that does, which answers with the
	// activation.
	members := []*cluster.Member{a, b, c}
	for i := range 12 {
		id := fmt.Sprintf("r%02d", i)
		var owners, redirects []string
		for _, m := range members {
			f := a.ActorSystem().Root.RequestFuture(actor.NewPID(m.Address(), "ringactor-placement"),
				&wire.PlacementRequest{Cluster: "redirect", Protocol: cluster.ProtocolVersion, Kind: "tally", Identity: id}, 5*time.Second)
			res, err := f.Result()
			if err != nil {
				t.Fatal(err)
			}
			r := res.(*wire.PlacementReply)
			switch {
			case r.GetRedirect() != "":
				redirects = append(redirects, r.GetRedirect())
			case r.GetPidId() != "":
				owners = append(owners, m.Address())
			default:
				t.Fatalf("%s from %s: %+v", id, m.Address(), r)
			}
		}
		if len(owners) != 1 || len(redirects) != 2 || redirects[0] != owners[0] || redirects[1] != owners[0] {
			t.Fatalf("%s: activated on %v, redirected to %v; want one owner and two redirects to it", id, owners, redirects)
		}
	}
	// Three clients, each knowing one member, bump the same identities.
	var clients []*cluster.Member
	for _, m := range members {
		cl, err := cluster.Start(ctx, "redirect", cluster.Peers([]string{m.Address()}), nil, cluster.AsClient(), cluster.WithLogger(actors.DiscardLogger()))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { closeMember(t, cl) })
		clients = append(clients, cl)
	}
	ids := []string{"carol", "dave", "erin", "frank", "grace", "heidi"}
	seen := map[string]map[int64]bool{}
	for _, cl := range clients {
		for id, r := range bumpAll(t, ctx, cl, ids) {
			if seen[id] == nil {
				seen[id] = map[int64]bool{}
			}
			if seen[id][r.Count] {
				t.Errorf("%s: count %d seen twice: two activations", id, r.Count)
			}
			seen[id][r.Count] = true
		}
	}
	if n := a.Activations() + b.Activations() + c.Activations(); n != 12+len(ids) {
		t.Errorf("%d activations, want %d", n, 12+len(ids))
	}
}

// TestClusterIsolation: a member whose only seed belongs to another
// cluster stays a cluster of one and logs the refusal, naming both
// clusters, as does the member it greeted; a client of the other cluster
// gets ErrClusterMismatch at once, naming both.
func TestClusterIsolation(t *testing.T) {
	var logA, logB lockedBuffer
	a := tallyMember(t, "alpha", nil, cluster.WithLogger(slog.New(slog.NewTextHandler(&logA, nil))))
	b := tallyMember(t, "beta", []string{a.Address()}, cluster.WithLogger(slog.New(slog.NewTextHandler(&logB, nil))))
	ctx, cancel := context.WithCancel(testCtx(t)) // a hang guard, not a speed bound
	defer cancel()
	// b is up on its own: it serves its own identities.
	if r, err := cluster.Request[tallied](ctx, b, "tally", "x", bump{}); err != nil || r.Member != b.Address() {
		t.Fatalf("beta alone: %+v, %v", r, err)
	}
	if a.Members() != 1 || b.Members() != 1 {
		t.Errorf("alpha sees %d members, beta %d; want 1 each", a.Members(), b.Members())
	}
	for name, l := range map[string]*lockedBuffer{"alpha": &logA, "beta": &logB} {
		s := l.String()
		if !strings.Contains(s, "level=ERROR") || !strings.Contains(s, `\"alpha\"`) || !strings.Contains(s, `\"beta\"`) {
			t.Errorf("%s's log does not name both clusters in an error:\n%s", name, s)
		}
	}
	cl, err := cluster.Start(ctx, "beta", cluster.Peers([]string{a.Address()}), nil, cluster.AsClient(), cluster.WithLogger(actors.DiscardLogger()))
	if err != nil {
		t.Fatal(err)
	}
	defer closeMember(t, cl)
	start := time.Now()
	_, err = cluster.Request[tallied](ctx, cl, "tally", "x", bump{})
	if !errors.Is(err, cluster.ErrClusterMismatch) || !strings.Contains(err.Error(), `"alpha"`) || !strings.Contains(err.Error(), `"beta"`) {
		t.Fatalf("request of a beta client through an alpha member: %v; want ErrClusterMismatch naming both", err)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("the mismatch took %v to report", d)
	}
}

// TestDeadSeedIsFast: a client whose seeds are a dead address and a live
// member joins, answers and closes without waiting on the dead seed.
func TestDeadSeedIsFast(t *testing.T) {
	a := tallyMember(t, "deadseed", nil)
	dead := fmt.Sprintf("127.0.0.1:%d", freeLoopbackPort(t))
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	start := time.Now()
	cl, err := cluster.Start(ctx, "deadseed", cluster.Peers([]string{dead, a.Address()}), nil, cluster.AsClient(), cluster.WithLogger(actors.DiscardLogger()))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cluster.Request[tallied](ctx, cl, "tally", "x", bump{}); err != nil {
		t.Fatal(err)
	}
	closeMember(t, cl)
	// Proto.Actor holds messages to (and the shutdown of an endpoint for)
	// an address where nothing listens for two seconds; the dead seed must
	// cost nothing like that. (The CLI's one-shot call is timed in README.)
	d := time.Since(start)
	t.Logf("join, request and close with a dead seed: %v", d)
	if d > 1500*time.Millisecond {
		t.Errorf("join, request and close with a dead seed took %v: the dead seed held them", d)
	}
}

// TestAdvertise: a member advertises WithAdvertise's address, and a member
// that knows it by its bind address (an alias) still joins it.
func TestAdvertise(t *testing.T) {
	port := freeLoopbackPort(t)
	bind := fmt.Sprintf("127.0.0.1:%d", port)
	a := tallyMember(t, "advertise", nil, cluster.WithAddress(bind), cluster.WithAdvertise("localhost:0"))
	if want := fmt.Sprintf("localhost:%d", port); a.Address() != want {
		t.Fatalf("advertised %q, want %q", a.Address(), want)
	}
	b := tallyMember(t, "advertise", []string{bind})
	waitTopology(t, a, 2)
	waitTopology(t, b, 2)
	ctx, cancel := context.WithCancel(testCtx(t)) // a hang guard, not a speed bound
	defer cancel()
	bumpAll(t, ctx, b, []string{"p", "q", "r", "s"})
	if _, err := cluster.Start(ctx, "advertise", cluster.Peers(nil), nil, cluster.WithAdvertise("0.0.0.0:7000")); err == nil {
		t.Error("a wildcard advertised address was accepted")
	}
}

// lockedBuffer is a bytes.Buffer safe for concurrent writers.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}
