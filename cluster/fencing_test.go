//go:build !race

package cluster

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	pcluster "github.com/asynkron/protoactor-go/cluster"
	clientv3 "go.etcd.io/etcd/client/v3"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/ringactor/ringactor/actors"
	"github.com/ringactor/ringactor/internal/testutil/hangguard"
	"github.com/ringactor/ringactor/internal/testutil/testproc"
	"github.com/ringactor/ringactor/messages"
)

// fenceBump is the request of TestFalseSuspicion's kind; fenceReply its
// reply: the activation that answered (a number unique in the process).
type fenceBump struct{}
type fenceReply struct{ Activation int64 }

func init() {
	messages.MustRegister[fenceBump]("ringactor.cluster.test.FenceBump")
	messages.MustRegister[fenceReply]("ringactor.cluster.test.FenceReply")
}

// liveCount counts the live activations of each identity, across every
// member of the process: one is live from its start to its Passivate.
type liveCount struct {
	mu    sync.Mutex
	live  map[string]int
	worst map[string]int // the most live at once
	next  atomic.Int64
}

func (l *liveCount) kind() *Kind {
	return NewStatefulKind("fenced", func(identity string, _ []byte) (Stateful[fenceBump, fenceReply], error) {
		l.mu.Lock()
		l.live[identity]++
		l.worst[identity] = max(l.worst[identity], l.live[identity])
		l.mu.Unlock()
		return &fencedActivation{l: l, identity: identity, n: l.next.Add(1)}, nil
	})
}

// bumpUntilOK sends each identity of ids a bump through m until it
// answers (each try under a 2 s deadline): the test fails when ctx ends
// first, naming what the test was at, the identity and the member.
func bumpUntilOK(ctx context.Context, t *testing.T, m *Member, ids []string, what string) {
	t.Helper()
	for _, id := range ids {
		for {
			rctx, cancel := context.WithTimeout(ctx, 2*time.Second)
			_, err := Request[fenceReply](rctx, m, "fenced", id, fenceBump{})
			cancel()
			if err == nil {
				break
			}
			if ctx.Err() != nil {
				t.Fatalf("%s: %s never answered from %s: %v", what, id, m.Address(), err)
			}
		}
	}
}

// newLiveCount returns a liveCount that the test checks at its end (after
// a failure too): no identity may have had two live activations at once.
func newLiveCount(t *testing.T) *liveCount {
	l := &liveCount{live: map[string]int{}, worst: map[string]int{}}
	t.Cleanup(func() {
		if f := l.forks(); len(f) > 0 {
			t.Errorf("identities with two live activations at once: %v", f)
		}
	})
	return l
}

// startMember starts a quiet member of the cluster name on provider p,
// hosting l's kind; it is closed at the end of the test.
func (l *liveCount) startMember(ctx context.Context, t *testing.T, name string, p pcluster.ClusterProvider) *Member {
	t.Helper()
	m, err := Start(ctx, name, p, []*Kind{l.kind()}, WithLogger(actors.DiscardLogger()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = m.Close(hangguard.Context(t)) })
	return m
}

// forks returns the identities that had two live activations at once.
func (l *liveCount) forks() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []string
	for id, n := range l.worst {
		if n > 1 {
			out = append(out, fmt.Sprintf("%s (%d at once)", id, n))
		}
	}
	return out
}

type fencedActivation struct {
	l        *liveCount
	identity string
	n        int64
}

func (a *fencedActivation) Handle(context.Context, fenceBump) (fenceReply, error) {
	return fenceReply{Activation: a.n}, nil
}

func (a *fencedActivation) Passivate() ([]byte, error) {
	a.l.mu.Lock()
	a.l.live[a.identity]--
	a.l.mu.Unlock()
	return nil, nil
}

// waitUntil polls cond until it holds or ctx (a hang guard) ends.
func waitUntil(t *testing.T, ctx context.Context, what string, cond func() bool) {
	t.Helper()
	hangguard.Until(ctx, t, what, cond)
}

// activateOwned activates n identities of the fenced kind that a owns
// (named prefix0, prefix1, …, those a does not own skipped), asking through
// via, and checks that a holds exactly those activations.
func activateOwned(ctx context.Context, t *testing.T, a, via *Member, prefix string, n int) []string {
	t.Helper()
	var ids []string
	for i := 0; len(ids) < n; i++ {
		id := fmt.Sprintf("%s%d", prefix, i)
		if a.currentView().owner("fenced", id) == a.Address() {
			ids = append(ids, id)
		}
	}
	for _, id := range ids {
		if _, err := Request[fenceReply](ctx, via, "fenced", id, fenceBump{}); err != nil {
			t.Fatalf("%s: %v", id, err)
		}
	}
	if a.Activations() != len(ids) {
		t.Fatalf("A holds %d activations, want %d", a.Activations(), len(ids))
	}
	return ids
}

// TestFalseSuspicion: member A's greetings stop reaching B and C (as when
// its heartbeats arrive late) while A runs and keeps its activations; B
// and C drop A and activate A's identities for a client whose view has
// lost A, while a client whose view still holds A keeps asking A. No
// identity ever has two live activations (counted in the kind's factory),
// and every request ends once, with its reply or a typed error. When A's
// greetings get through again, B refuses them (A's member id is dropped),
// and A rejoins as a new incarnation; the cluster converges and every
// identity answers from every member and client.
func TestFalseSuspicion(t *testing.T) {
	ctx := hangguard.Context(t)
	live := newLiveCount(t)
	quiet := WithLogger(actors.DiscardLogger())
	popts := []PeersOption{WithHeartbeat(50 * time.Millisecond), WithFailureTimeout(time.Second)}
	start := func(p *PeersProvider, opts ...Option) *Member {
		var kinds []*Kind
		if len(opts) == 0 {
			kinds = []*Kind{live.kind()}
		}
		m, err := Start(ctx, "fence", p, kinds, append([]Option{quiet}, opts...)...)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			cctx, cancel := context.WithCancel(hangguard.Context(t))
			defer cancel()
			_ = m.Close(cctx)
		})
		return m
	}
	pa := Peers(nil, popts...)
	a := start(pa)
	b := start(Peers([]string{a.Address()}, popts...))
	c := start(Peers([]string{a.Address()}, popts...))
	members := []*Member{a, b, c}
	oldView := start(Peers([]string{a.Address()}, popts...), AsClient())
	pn := Peers([]string{b.Address()}, popts...)
	newView := start(pn, AsClient())
	for _, m := range append(members, oldView, newView) {
		if err := m.WaitMembers(ctx, 3); err != nil {
			t.Fatal(err)
		}
	}
	for _, m := range members {
		waitUntil(t, ctx, "readiness", m.isReady)
	}

	// The identities A owns, activated there.
	ids := activateOwned(ctx, t, a, oldView, "f", 12)

	// Requests from both clients and from A itself (its own view still
	// holds A) until the cluster has converged again.
	stop := make(chan struct{})
	var (
		wg       sync.WaitGroup
		outcomes sync.Map // "from/class" → *atomic.Int64
	)
	count := func(from, class string) {
		v, _ := outcomes.LoadOrStore(from+"/"+class, new(atomic.Int64))
		v.(*atomic.Int64).Add(1)
	}
	drive := func(from string, m *Member) {
		defer wg.Done()
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			rctx, cancel := context.WithTimeout(ctx, 500*time.Millisecond) // the request's own deadline
			_, err := Request[fenceReply](rctx, m, "fenced", ids[i%len(ids)], fenceBump{})
			cancel()
			var re *RemoteError
			switch {
			case err == nil:
				count(from, "ok")
			case errors.Is(err, ErrTimeout):
				count(from, "timeout")
			case errors.Is(err, ErrMemberUnavailable):
				count(from, "unavailable")
			case errors.As(err, &re):
				count(from, "remote:"+re.Kind)
			default:
				count(from, "untyped: "+err.Error())
			}
		}
	}
	wg.Add(3)
	go drive("old-view client", oldView)
	go drive("new-view client", newView)
	go drive("A", a)

	// A's greetings to B and C, and its answers to theirs, are lost; the
	// new-view client stops hearing from A too.
	isBC := func(addr string) bool { return addr == b.Address() || addr == c.Address() }
	pa.cut.Store(&isBC)
	isA := func(addr string) bool { return addr == a.Address() }
	pn.cut.Store(&isA)
	for _, m := range []*Member{b, c, newView} {
		waitUntil(t, ctx, m.Address()+" dropping A", func() bool { return m.Members() == 2 })
	}
	// The identities answer from B and C for the new-view client.
	for _, id := range ids {
		for {
			rctx, cancel := context.WithTimeout(ctx, 2*time.Second)
			r, err := Request[fenceReply](rctx, newView, "fenced", id, fenceBump{})
			cancel()
			if err == nil && r.Activation > 0 {
				break
			}
			if ctx.Err() != nil {
				t.Fatalf("%s never answered without A: %v", id, err)
			}
		}
	}
	// A, fenced, has handed them over; fenced for a failure timeout, it
	// presumes itself dropped.
	waitUntil(t, ctx, "A passivating its activations", func() bool { return a.Activations() == 0 })
	waitUntil(t, ctx, "A presuming itself dropped", func() bool {
		pa.mu.Lock()
		defer pa.mu.Unlock()
		return pa.presumed
	})

	// A's greetings get through again: B and C refuse its dropped member
	// id, and A rejoins as a new incarnation.
	pa.cut.Store(nil)
	pn.cut.Store(nil)
	for _, m := range append(members, oldView, newView) {
		waitUntil(t, ctx, m.Address()+" seeing A again", func() bool { return m.Members() == 3 })
	}
	pa.mu.Lock()
	inc := pa.incarnation
	pa.mu.Unlock()
	if inc == 0 {
		t.Error("A was not told that the others dropped it (it did not rejoin as a new incarnation)")
	}
	close(stop)
	wg.Wait()
	for _, m := range append(members, oldView, newView) {
		waitUntil(t, ctx, m.Address()+" joined", func() bool { return m.client || (m.isReady() && !m.isFenced()) })
		bumpUntilOK(ctx, t, m, ids, "after A rejoined")
	}
	outcomes.Range(func(k, v any) bool {
		t.Logf("%s: %d", k, v.(*atomic.Int64).Load())
		if strings.Contains(k.(string), "/untyped") {
			t.Errorf("untyped outcome %s", k)
		}
		return true
	})
}

// TestEtcdLeaseFence: a member whose etcd lease is gone (revoked here, as
// when its keep-alives stop reaching etcd in time: the others drop it)
// fences itself and passivates its activations, whose identities then
// answer from the other member. Without a restart it then rejoins as a new
// incarnation (a new member id: the others never take a dropped one
// back), which the other member sees, and its identities answer from it
// again. No identity has two live activations at once.
func TestEtcdLeaseFence(t *testing.T) {
	if !testproc.HaveEtcd() {
		t.Skip("etcd not found in PATH (Debian: apt-get install etcd-server)")
	}
	endpoint := testproc.StartEtcd(t, "ringactor-fence")
	ctx := hangguard.Context(t)
	live := newLiveCount(t)
	start := func() (*Member, *etcdProvider) {
		p, err := Etcd([]string{endpoint}, WithEtcdBaseKey("/ringactor-fence"))
		if err != nil {
			t.Fatal(err)
		}
		return live.startMember(ctx, t, "fence", p), p.(*etcdProvider)
	}
	a, pa := start()
	b, _ := start()
	for _, m := range []*Member{a, b} {
		if err := m.WaitMembers(ctx, 2); err != nil {
			t.Fatal(err)
		}
	}
	if a.isFenced() {
		t.Fatal("a registered member is fenced")
	}
	oldID := pa.memberID()
	ids := activateOwned(ctx, t, a, b, "e", 8)
	cl, err := clientv3.New(clientv3.Config{Endpoints: []string{endpoint}})
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	// The activations that answer before the lapse; A's fence, when it
	// passivates them, reports whether A was fenced then.
	before := map[string]int64{}
	for _, id := range ids {
		r, err := Request[fenceReply](ctx, a, "fenced", id, fenceBump{})
		if err != nil {
			t.Fatalf("%s: %v", id, err)
		}
		before[id] = r.Activation
	}
	var removed, fencedThen atomic.Bool
	pa.mu.Lock()
	hook := pa.onRemoved
	pa.onRemoved = func(reason string) {
		fencedThen.Store(a.isFenced())
		removed.Store(true)
		hook(reason)
	}
	pa.mu.Unlock()
	if _, err := cl.Revoke(ctx, pa.leaseID()); err != nil {
		t.Fatal(err)
	}
	// B drops A's old member id, then sees A's new incarnation.
	bHas := func(id string) bool {
		for _, m := range b.Cluster().MemberList.Members().Members() {
			if m.Id == id {
				return true
			}
		}
		return false
	}
	waitUntil(t, ctx, "A rejoining under a new member id", func() bool { return pa.memberID() != oldID && !a.isFenced() })
	if !removed.Load() || !fencedThen.Load() {
		t.Errorf("A's registration lapsed: passivated %v, fenced then %v; want both", removed.Load(), fencedThen.Load())
	}
	newID := pa.memberID()
	if !strings.HasPrefix(newID, oldID+".") {
		t.Errorf("A rejoined as %q, want %q.N", newID, oldID)
	}
	waitUntil(t, ctx, "B seeing A's new incarnation", func() bool { return bHas(newID) && !bHas(oldID) && b.Members() == 2 })
	waitUntil(t, ctx, "A seeing B and itself", func() bool { return a.Members() == 2 })
	// A's identities answer again, through either member, from A.
	bumpUntilOK(ctx, t, b, ids, "after A rejoined (through B)")
	bumpUntilOK(ctx, t, a, ids, "after A rejoined (through A)")
	waitUntil(t, ctx, "A holding its identities again", func() bool { return a.Activations() == len(ids) })
	for _, id := range ids {
		r, err := Request[fenceReply](ctx, a, "fenced", id, fenceBump{})
		if err != nil {
			t.Fatalf("%s after the rejoin: %v", id, err)
		}
		if r.Activation == before[id] {
			t.Errorf("%s answered from the activation it had before the lapse (%d): it was never passivated", id, r.Activation)
		}
		if owner := a.currentView().owner("fenced", id); owner != a.Address() {
			t.Errorf("%s is owned by %s after the rejoin, want A (%s)", id, owner, a.Address())
		}
	}
	if a.isFenced() {
		t.Error("A fenced again after it rejoined")
	}
}

// setPodReadiness sets the Ready condition of the pod, as the kubelet does
// after its readiness probe.
func setPodReadiness(t *testing.T, ctx context.Context, cs *fake.Clientset, ns, pod string, ready bool) {
	t.Helper()
	p, err := cs.CoreV1().Pods(ns).Get(ctx, pod, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	st := corev1.ConditionFalse
	if ready {
		st = corev1.ConditionTrue
	}
	p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: st}}
	if _, err := cs.CoreV1().Pods(ns).UpdateStatus(ctx, p, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// TestKubernetesNotReadyFence: member A's pod turns not ready (its
// readiness probe failing under load) while A runs: B drops A and
// activates A's identities, A fences itself and passivates them; no
// identity has two live activations. When the pod is ready again A
// rejoins as a new incarnation (a new member id on its pod) and both
// members serve again.
func TestKubernetesNotReadyFence(t *testing.T) {
	const ns, name = "apps", "k8sfence"
	ctx := hangguard.Context(t)
	cs := fake.NewClientset()
	live := newLiveCount(t)
	pods := []string{"ringactor-0", "ringactor-1"}
	for _, pod := range pods {
		if _, err := cs.CoreV1().Pods(ns).Create(ctx, &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: pod, Namespace: ns, Labels: map[string]string{KubernetesClusterLabel: name}},
			Status:     corev1.PodStatus{Phase: corev1.PodRunning},
		}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	start := func(pod string) *Member {
		p, err := Kubernetes(WithKubernetesClient(cs), WithKubernetesNamespace(ns), WithKubernetesPodName(pod))
		if err != nil {
			t.Fatal(err)
		}
		return live.startMember(ctx, t, name, p)
	}
	a, b := start(pods[0]), start(pods[1])
	for _, pod := range pods {
		setPodReadiness(t, ctx, cs, ns, pod, true)
	}
	for _, m := range []*Member{a, b} {
		if err := m.WaitMembers(ctx, 2); err != nil {
			t.Fatal(err)
		}
		waitUntil(t, ctx, "readiness", m.isReady)
	}
	var ids []string
	for i := 0; len(ids) < 8; i++ {
		id := fmt.Sprintf("k%d", i)
		if a.currentView().owner("fenced", id) == a.Address() {
			ids = append(ids, id)
		}
	}
	bumpUntilOK(ctx, t, b, ids, "before")
	if a.Activations() != len(ids) {
		t.Fatalf("A holds %d activations, want %d", a.Activations(), len(ids))
	}

	setPodReadiness(t, ctx, cs, ns, pods[0], false)
	waitUntil(t, ctx, "B dropping A", func() bool { return b.Members() == 1 })
	bumpUntilOK(ctx, t, b, ids, "A's pod not ready")
	waitUntil(t, ctx, "A fencing itself", a.isFenced)
	waitUntil(t, ctx, "A passivating its activations", func() bool { return a.Activations() == 0 })

	setPodReadiness(t, ctx, cs, ns, pods[0], true)
	for _, m := range []*Member{a, b} {
		waitUntil(t, ctx, "both members again", func() bool { return m.Members() == 2 && !m.isFenced() })
	}
	got, err := cs.CoreV1().Pods(ns).Get(ctx, pods[0], metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if id := got.Annotations[KubernetesMemberAnnotation]; id == a.sys.ID {
		t.Errorf("A rejoined under its dropped member id %q", id)
	}
	bumpUntilOK(ctx, t, a, ids, "after A rejoined")
	bumpUntilOK(ctx, t, b, ids, "after A rejoined")
}
