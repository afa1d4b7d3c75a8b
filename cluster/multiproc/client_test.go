package multiproc

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ringactor/ringactor/actors"
	"github.com/ringactor/ringactor/cluster"
	"github.com/ringactor/ringactor/internal/demo"
)

// The client scenarios run in a child process (see TestMain): each joins
// the members at seedsEnv as a cluster client, does its part, prints one
// line "RESULT <json>" and exits.

// builtinResult is what the builtin scenario reports.
type builtinResult struct {
	Errors []string `json:"errors"`
}

// failoverResult is what the failover scenario reports.
type failoverResult struct {
	OK        int64    `json:"ok"`
	Typed     int64    `json:"typed"`
	Untyped   []string `json:"untyped"`    // errors that are not the cluster's typed errors
	Slow      []string `json:"slow"`       // requests that outlived their deadline
	Victims   int      `json:"victims"`    // identities the killed member hosted
	Recovered int      `json:"recovered"`  // of those, how many answered from a survivor
	WorstNs   int64    `json:"worst_ns"`   // the last recovery, after the kill
	After     []string `json:"after"`      // failures of the round after recovery
	FromDead  int      `json:"from_dead"`  // replies of that round from the killed member
	DroppedNs int64    `json:"dropped_ns"` // when the client's topology dropped the killed member, after the kill; 0 = not seen
}

// Sizes of the failover scenario.
const (
	identities      = 200
	workers         = 8
	requestDeadline = 2 * time.Second
	deadlineSlack   = 500 * time.Millisecond
	recoveryLimit   = 10 * time.Second
)

func runScenario(mode string) int {
	switch mode {
	case "churn":
		return runChurnClient()
	case "devices":
		return runDevicesClient()
	case "netfault":
		return runNetClient()
	case "netwait":
		return runNetWait()
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	p, err := provider()
	if err != nil {
		fmt.Fprintln(os.Stderr, "provider:", err)
		return 1
	}
	cl, err := cluster.Start(ctx, clusterName, p, nil, cluster.AsClient(), cluster.WithLogger(actors.DiscardLogger()))
	if err != nil {
		fmt.Fprintln(os.Stderr, "start:", err)
		return 1
	}
	defer func() {
		cctx, ccancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer ccancel()
		if err := cl.Close(cctx); err != nil {
			fmt.Fprintln(os.Stderr, "close:", err)
		}
	}()
	if err := cl.WaitMembers(ctx, envInt(membersEnv, 3)); err != nil {
		fmt.Fprintln(os.Stderr, "waiting for members:", err)
		return 1
	}
	var res any
	switch mode {
	case "builtin":
		res = builtinScenario(ctx, cl)
	case "failover":
		res, err = failoverScenario(ctx, cl)
	case "counter":
		res, err = counterScenario(ctx, cl)
	default:
		err = fmt.Errorf("unknown scenario %q", mode)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	b, _ := json.Marshal(res)
	fmt.Printf("RESULT %s\n", b)
	return 0
}

// builtinScenario calls echo and add in their JSON form.
func builtinScenario(ctx context.Context, cl *cluster.Member) builtinResult {
	var r builtinResult
	fail := func(format string, a ...any) { r.Errors = append(r.Errors, fmt.Sprintf(format, a...)) }
	demo.Register() // the JSON forms of echo and add
	for i := range 20 {
		id := fmt.Sprintf("e%d", i)
		out, err := cluster.RequestJSON(ctx, cl, "echo", id, []byte(`{"x":1,"s":"hi"}`))
		var got map[string]any
		if err != nil || json.Unmarshal(out, &got) != nil || got["s"] != "hi" || got["x"] != float64(1) {
			fail("echo %s: %s, %v", id, out, err)
		}
		out, err = cluster.RequestJSON(ctx, cl, "add", id, []byte(`{"a":[1,2],"b":[10,20]}`))
		if err != nil || string(out) != `{"sum":[11,22]}` {
			fail("add %s: %s, %v", id, out, err)
		}
	}
	_, err := cluster.RequestJSON(ctx, cl, "add", "bad", []byte(`{"a":[1],"b":[]}`))
	var re *cluster.RemoteError
	if !errors.As(err, &re) || re.Kind != "execution" {
		fail("add with mismatched lengths: %v, want a remote execution error", err)
	}
	if _, err := cluster.RequestJSON(ctx, cl, "add", "bad", []byte(`{"a":`)); err == nil {
		fail("malformed JSON accepted")
	}
	if _, err := cluster.RequestJSON(ctx, cl, "nope", "x", []byte(`{}`)); !errors.Is(err, cluster.ErrUnknownKind) {
		fail("unknown kind: %v", err)
	}
	return r
}

func typedClusterError(err error) bool {
	var re *cluster.RemoteError
	return errors.Is(err, cluster.ErrTimeout) || errors.Is(err, cluster.ErrMemberUnavailable) || errors.As(err, &re)
}

// failoverScenario activates the whoami identities, prints where each runs
// ("OWNERS <json>"), and runs steady load until the parent says which
// member it killed and when ("KILLED <addr> <unix nanos>" on stdin) and
// every identity of that member has answered from a survivor (or
// recoveryLimit has passed); then one more round over every identity.
func failoverScenario(ctx context.Context, cl *cluster.Member) (failoverResult, error) {
	var res failoverResult
	id := func(i int) string { return fmt.Sprintf("w%03d", i) }
	owner := make(map[string]string, identities)
	for i := range identities {
		h, err := cluster.Request[Here](ctx, cl, "whoami", id(i), Who{})
		if err != nil {
			return res, fmt.Errorf("warm-up %s: %w", id(i), err)
		}
		owner[id(i)] = h.Addr
	}
	b, _ := json.Marshal(owner)
	fmt.Printf("OWNERS %s\n", b)

	var (
		mu        sync.Mutex
		ok, typed atomic.Int64
		victim    atomic.Pointer[string]
		killedAt  atomic.Int64
		recovered = map[string]time.Duration{}
		stop      = make(chan struct{})
		wg        sync.WaitGroup
	)
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
				name := id(n % identities)
				rctx, rcancel := context.WithTimeout(context.Background(), requestDeadline)
				start := time.Now()
				h, err := cluster.Request[Here](rctx, cl, "whoami", name, Who{Seq: n})
				took := time.Since(start)
				rcancel()
				mu.Lock()
				if took > requestDeadline+bound(deadlineSlack) {
					res.Slow = append(res.Slow, fmt.Sprintf("%s took %v (%v)", name, took, err))
				}
				switch {
				case err == nil:
					ok.Add(1)
					// An answer from the killed member itself was on its way
					// when it died; recovery is an answer from a survivor.
					if v := victim.Load(); v != nil && owner[name] == *v && h.Addr != *v {
						if _, seen := recovered[name]; !seen {
							recovered[name] = time.Since(time.Unix(0, killedAt.Load()))
						}
					}
				case typedClusterError(err):
					typed.Add(1)
				default:
					res.Untyped = append(res.Untyped, fmt.Sprintf("%s: %v", name, err))
				}
				mu.Unlock()
			}
		}()
	}

	// Wait for the parent's word.
	line, err := bufio.NewReader(os.Stdin).ReadString('\n')
	if err != nil {
		close(stop)
		wg.Wait()
		return res, fmt.Errorf("reading the kill notice: %w", err)
	}
	f := strings.Fields(line)
	if len(f) != 3 || f[0] != "KILLED" {
		close(stop)
		wg.Wait()
		return res, fmt.Errorf("bad kill notice %q", line)
	}
	at, _ := strconv.ParseInt(f[2], 10, 64)
	dead := f[1]
	for _, o := range owner {
		if o == dead {
			res.Victims++
		}
	}
	killedAt.Store(at)
	victim.Store(&dead)
	deadline := time.Unix(0, at).Add(bound(recoveryLimit))
	before := cl.Members()
	for time.Now().Before(deadline) {
		if res.DroppedNs == 0 && cl.Members() < before {
			res.DroppedNs = int64(time.Since(time.Unix(0, at)))
		}
		mu.Lock()
		done := len(recovered) == res.Victims
		mu.Unlock()
		if done && res.DroppedNs != 0 {
			break
		}
		time.Sleep(5 * time.Millisecond) // polling the load's progress, not synchronising
	}
	close(stop)
	wg.Wait()
	res.OK, res.Typed, res.Recovered = ok.Load(), typed.Load(), len(recovered)
	for _, d := range recovered {
		res.WorstNs = max(res.WorstNs, int64(d))
	}
	// After recovery every request succeeds, from a survivor.
	for i := range identities {
		h, err := cluster.Request[Here](ctx, cl, "whoami", id(i), Who{})
		switch {
		case err != nil:
			res.After = append(res.After, fmt.Sprintf("%s: %v", id(i), err))
		case h.Addr == dead:
			res.FromDead++
		}
	}
	return res, nil
}
