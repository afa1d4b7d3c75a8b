package multiproc

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ringactor/ringactor/cluster"
)

// startThree starts three member processes, each knowing the ones before
// it, and a client that knows the first.
func startThree(t *testing.T) ([]*child, *cluster.Member) {
	var kids []*child
	var seeds []string
	for range 3 {
		c := startChild(t, seeds)
		kids = append(kids, c)
		seeds = append(seeds, c.addr)
	}
	// Stop them together: each graceful stop takes seconds (Proto.Actor's
	// shutdown sleeps two).
	t.Cleanup(func() {
		for _, c := range kids {
			c.signal()
		}
		for _, c := range kids {
			c.stop(t)
		}
	})
	return kids, startClient(t, seeds[:1], 3)
}

// TestBuiltinKindsAcrossProcesses calls echo and add in their JSON form on
// identities spread over three member processes.
func TestBuiltinKindsAcrossProcesses(t *testing.T) {
	_, cl := startThree(t)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	for i := range 20 {
		id := fmt.Sprintf("e%d", i)
		out, err := cluster.RequestJSON(ctx, cl, "echo", id, []byte(`{"x":1,"s":"hi"}`))
		if err != nil {
			t.Fatalf("echo %s: %v", id, err)
		}
		var got map[string]any
		if err := json.Unmarshal(out, &got); err != nil || got["s"] != "hi" || got["x"] != float64(1) {
			t.Fatalf("echo %s: %s (%v)", id, out, err)
		}
		out, err = cluster.RequestJSON(ctx, cl, "add", id, []byte(`{"a":[1,2],"b":[10,20]}`))
		if err != nil || string(out) != `{"sum":[11,22]}` {
			t.Fatalf("add %s: %s, %v", id, out, err)
		}
	}
	_, err := cluster.RequestJSON(ctx, cl, "add", "bad", []byte(`{"a":[1],"b":[]}`))
	var re *cluster.RemoteError
	if !errors.As(err, &re) || re.Kind != "execution" {
		t.Fatalf("add with mismatched lengths: %v, want a remote execution error", err)
	}
	if _, err := cluster.RequestJSON(ctx, cl, "add", "bad", []byte(`{"a":`)); err == nil {
		t.Fatal("malformed JSON accepted")
	}
	if _, err := cluster.RequestJSON(ctx, cl, "nope", "x", []byte(`{}`)); !errors.Is(err, cluster.ErrUnknownKind) {
		t.Fatalf("unknown kind: %v", err)
	}
}

// outcome counts the results of the load.
type outcome struct {
	ok, typed atomic.Int64
	mu        sync.Mutex
	untyped   []error
	slow      []string
}

func typedClusterError(err error) bool {
	var re *cluster.RemoteError
	return errors.Is(err, cluster.ErrTimeout) || errors.Is(err, cluster.ErrMemberUnavailable) || errors.As(err, &re)
}

// TestFailover runs steady load over 200 identities on three member
// processes, kills one with SIGKILL, and checks that every request ends with
// a reply or a typed error within its deadline, that the dead member's
// identities answer again from the survivors within 10 s, and that once
// they do every request succeeds.
func TestFailover(t *testing.T) {
	if testing.Short() {
		t.Skip("starts three member processes")
	}
	kids, cl := startThree(t)
	const (
		identities = 200
		workers    = 8
		deadline   = 2 * time.Second
		slack      = 500 * time.Millisecond
	)
	id := func(i int) string { return fmt.Sprintf("w%03d", i) }

	// Warm up: activate every identity and learn where it runs.
	owner := make([]string, identities)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for i := range identities {
		h, err := cluster.Request[Here](ctx, cl, "whoami", id(i), Who{})
		if err != nil {
			t.Fatalf("warm-up %s: %v", id(i), err)
		}
		owner[i] = h.Addr
	}
	victim := kids[1]
	var victims []int
	for i, o := range owner {
		if o == victim.addr {
			victims = append(victims, i)
		}
	}
	if len(victims) == 0 || len(victims) == identities {
		t.Fatalf("%d of %d identities on the victim: disthash did not spread them", len(victims), identities)
	}

	// Steady load.
	var (
		out       outcome
		killedAt  atomic.Int64 // unix nanos; 0 before the kill
		recMu     sync.Mutex
		recovered = map[int]time.Duration{} // victim identity → first answer after the kill
		stop      = make(chan struct{})
		wg        sync.WaitGroup
	)
	isVictim := make(map[int]bool, len(victims))
	for _, v := range victims {
		isVictim[v] = true
	}
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for n := w; ; n += workers {
				select {
				case <-stop:
					return
				default:
				}
				i := n % identities
				rctx, rcancel := context.WithTimeout(context.Background(), deadline)
				start := time.Now()
				h, err := cluster.Request[Here](rctx, cl, "whoami", id(i), Who{Seq: n})
				took := time.Since(start)
				rcancel()
				if took > deadline+slack {
					out.mu.Lock()
					out.slow = append(out.slow, fmt.Sprintf("%s took %v (%v)", id(i), took, err))
					out.mu.Unlock()
				}
				switch {
				case err == nil:
					out.ok.Add(1)
					// An answer from the killed member itself is a reply
					// that was on its way when it died; recovery is an
					// answer from a survivor.
					if k := killedAt.Load(); k != 0 && isVictim[i] && h.Addr != victim.addr {
						recMu.Lock()
						if _, seen := recovered[i]; !seen {
							recovered[i] = time.Since(time.Unix(0, k))
						}
						recMu.Unlock()
					}
				case typedClusterError(err):
					out.typed.Add(1)
				default:
					out.mu.Lock()
					out.untyped = append(out.untyped, fmt.Errorf("%s: %w", id(i), err))
					out.mu.Unlock()
				}
			}
		}()
	}

	// Let the load run, then kill the victim.
	waitFor(t, 10*time.Second, func() bool { return out.ok.Load() >= identities })
	killedAt.Store(time.Now().UnixNano())
	victim.kill(t) // SIGKILL, then reaped
	t.Logf("killed %s, which hosted %d of %d identities", victim.addr, len(victims), identities)

	// Every victim identity answers again within 10 s.
	ok := waitFor(t, 10*time.Second, func() bool {
		recMu.Lock()
		defer recMu.Unlock()
		return len(recovered) == len(victims)
	})
	close(stop)
	wg.Wait()
	recMu.Lock()
	var worst time.Duration
	for _, d := range recovered {
		worst = max(worst, d)
	}
	t.Logf("load: %d ok, %d typed errors; %d/%d victim identities recovered, the last %v after the kill",
		out.ok.Load(), out.typed.Load(), len(recovered), len(victims), worst)
	recMu.Unlock()
	if !ok {
		t.Errorf("only %d of %d identities of the killed member answered again within 10s", len(recovered), len(victims))
	}
	for _, e := range out.untyped {
		t.Error(e)
	}
	for _, s := range out.slow {
		t.Errorf("past its deadline: %s", s)
	}

	// After recovery every request succeeds, from a survivor.
	for i := range identities {
		h, err := cluster.Request[Here](ctx, cl, "whoami", id(i), Who{})
		if err != nil {
			t.Errorf("after recovery %s: %v", id(i), err)
			continue
		}
		if h.Addr == victim.addr {
			t.Errorf("after recovery %s answered from the killed member", id(i))
		}
	}
}

// waitFor polls cond every few milliseconds until it holds or d passes.
func waitFor(t *testing.T, d time.Duration, cond func() bool) bool {
	t.Helper()
	end := time.Now().Add(d)
	for time.Now().Before(end) {
		if cond() {
			return true
		}
		time.Sleep(5 * time.Millisecond)
	}
	return cond()
}
