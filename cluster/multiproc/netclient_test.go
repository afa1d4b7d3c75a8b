package multiproc

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/ringactor/ringactor/cluster"
)

// The network-fault client (mode "netfault") drives the tracked kind over
// the identities t0 … t<n-1> from its workers, each request with
// netDeadline, and writes one record per request to the file at
// netOutEnv: "identity activation send_ns recv_ns class", class being ok,
// timeout, unavailable, remote:<kind> or untyped:<error>. It prints READY
// once every identity has answered once. On "HEAL <unix ns>" it waits
// until every identity has answered a request sent after that time (at
// most netRecoverFor) and prints "RECOVERED <ns after the heal>" (or
// "RECOVERED -1 <identities that did not answer>"); on "STOP" it stops,
// prints "RESULT <json>" and exits.
//
// Mode "netwait" polls the URL at netWaitEnv until it answers 200 (a
// service in a network namespace that the test process cannot reach).
const (
	netOutEnv        = "RINGACTOR_NETFAULT_OUT"
	netIdentitiesEnv = "RINGACTOR_NETFAULT_IDENTITIES"
	netWorkersEnv    = "RINGACTOR_NETFAULT_WORKERS"
	netMembersEnv    = "RINGACTOR_NETFAULT_MEMBERS"
	netWaitEnv       = "RINGACTOR_NETFAULT_WAIT_URL"

	netDeadline   = time.Second
	netRecoverFor = 60 * time.Second
)

// netResult is what a network-fault client reports when it stops.
type netResult struct {
	Requests int `json:"requests"`
}

// netRecorder writes the records of one client and keeps, by identity,
// whether it answered yet and, after the last heal notice, when it first
// answered a request sent after the heal.
type netRecorder struct {
	mu       sync.Mutex
	w        *bufio.Writer
	n        int
	answered map[string]bool
	healed   int64
	after    map[string]int64
}

// outcome classes one request's end: its reply or a typed error.
func outcome(err error) string {
	var re *cluster.RemoteError
	switch {
	case err == nil:
		return "ok"
	case errors.Is(err, cluster.ErrTimeout):
		return "timeout"
	case errors.As(err, &re):
		return "remote:" + re.Kind
	case errors.Is(err, cluster.ErrMemberUnavailable):
		return "unavailable"
	default:
		return "untyped:" + strings.ReplaceAll(err.Error(), " ", "_")
	}
}

func (r *netRecorder) request(cl *cluster.Member, id string) {
	ctx, cancel := context.WithTimeout(context.Background(), netDeadline)
	defer cancel()
	send := time.Now()
	rep, err := cluster.Request[Tracked](ctx, cl, "tracked", id, Track{})
	recv := time.Now()
	act := rep.Activation
	if act == "" {
		act = "-"
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	fmt.Fprintf(r.w, "%s %s %d %d %s\n", id, act, send.UnixNano(), recv.UnixNano(), outcome(err))
	r.n++
	if err == nil {
		r.answered[id] = true
		if _, seen := r.after[id]; !seen && r.healed != 0 && send.UnixNano() >= r.healed {
			r.after[id] = recv.UnixNano()
		}
	}
}

func netID(i int) string { return fmt.Sprintf("t%d", i) }

func runNetClient() int {
	ids := envInt(netIdentitiesEnv, 30)
	workers := envInt(netWorkersEnv, 6)
	f, err := os.Create(os.Getenv(netOutEnv))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer f.Close()
	rec := &netRecorder{w: bufio.NewWriterSize(f, 1<<16), answered: map[string]bool{}}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	p, err := provider()
	if err == nil {
		var cl *cluster.Member
		opts := []cluster.Option{cluster.AsClient(), cluster.WithLogger(memberLogger())}
		if b := os.Getenv(bindEnv); b != "" {
			// In a network namespace: loopback, the default, is not
			// reachable from the members' namespaces.
			opts = append(opts, cluster.WithAddress(b))
		}
		cl, err = cluster.Start(ctx, clusterName, p, nil, opts...)
		if err == nil {
			defer func() {
				cctx, ccancel := context.WithTimeout(context.Background(), 10*time.Second)
				defer ccancel()
				if err := cl.Close(cctx); err != nil {
					fmt.Fprintln(os.Stderr, "close:", err)
				}
			}()
			err = cl.WaitMembers(ctx, envInt(netMembersEnv, 1))
			if err == nil {
				cancel()
				err = netLoad(cl, rec, ids, workers)
			}
		}
	}
	cancel()
	rec.mu.Lock()
	if ferr := rec.w.Flush(); err == nil {
		err = ferr
	}
	n := rec.n
	rec.mu.Unlock()
	if err != nil {
		fmt.Fprintln(os.Stderr, "netfault client:", err)
		return 1
	}
	b, _ := json.Marshal(netResult{Requests: n})
	fmt.Printf("RESULT %s\n", b)
	return 0
}

func netLoad(cl *cluster.Member, rec *netRecorder, ids, workers int) error {
	warm := time.Now().Add(time.Minute)
	for i := range ids {
		for {
			rec.request(cl, netID(i))
			rec.mu.Lock()
			ok := rec.answered[netID(i)]
			rec.mu.Unlock()
			if ok {
				break
			}
			if time.Now().After(warm) {
				return fmt.Errorf("warm-up: %s never answered", netID(i))
			}
		}
	}
	fmt.Println("READY")
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rnd := rand.New(rand.NewPCG(uint64(os.Getpid()), uint64(w)))
			for {
				select {
				case <-stop:
					return
				default:
				}
				rec.request(cl, netID(rnd.IntN(ids)))
			}
		}()
	}
	defer func() {
		close(stop)
		wg.Wait()
	}()
	in := bufio.NewScanner(os.Stdin)
	for in.Scan() {
		f := strings.Fields(in.Text())
		switch {
		case len(f) == 1 && f[0] == "STOP":
			return nil
		case len(f) == 2 && f[0] == "HEAL":
			at, err := strconv.ParseInt(f[1], 10, 64)
			if err != nil {
				return fmt.Errorf("bad heal notice %q", in.Text())
			}
			rec.mu.Lock()
			rec.healed, rec.after = at, map[string]int64{}
			rec.mu.Unlock()
			wg.Add(1)
			go func() {
				defer wg.Done()
				awaitRecovery(rec, ids, at, stop)
			}()
		default:
			return fmt.Errorf("unknown command %q", in.Text())
		}
	}
	return errors.New("stdin closed before STOP")
}

// awaitRecovery waits until every identity has answered a request sent
// after healed (unix ns), and prints how long after healed the last of
// those first answers came.
func awaitRecovery(rec *netRecorder, ids int, healed int64, stop <-chan struct{}) {
	end := time.Unix(0, healed).Add(netRecoverFor)
	tick := time.NewTicker(10 * time.Millisecond) // polling the records, in the child
	defer tick.Stop()
	for {
		var missing []string
		var last int64
		rec.mu.Lock()
		for i := range ids {
			at, ok := rec.after[netID(i)]
			if !ok {
				missing = append(missing, netID(i))
			}
			last = max(last, at)
		}
		rec.mu.Unlock()
		if len(missing) == 0 {
			fmt.Printf("RECOVERED %d\n", last-healed)
			return
		}
		select {
		case <-stop:
			fmt.Printf("RECOVERED -1 %s\n", strings.Join(missing, ","))
			return
		case <-tick.C:
		}
		if time.Now().After(end) {
			fmt.Printf("RECOVERED -1 %s\n", strings.Join(missing, ","))
			return
		}
	}
}

// runNetWait polls the URL at netWaitEnv until it answers 200 (within a
// minute).
func runNetWait() int {
	url := os.Getenv(netWaitEnv)
	hc := &http.Client{Timeout: time.Second}
	end := time.Now().Add(time.Minute)
	for {
		resp, err := hc.Get(url)
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return 0
			}
			err = errors.New(resp.Status)
		}
		if time.Now().After(end) {
			fmt.Fprintf(os.Stderr, "%s: %v\n", url, err)
			return 1
		}
		time.Sleep(50 * time.Millisecond) // polling the service
	}
}
