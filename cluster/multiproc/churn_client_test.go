package multiproc

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/ringactor/ringactor/actors"
	"github.com/ringactor/ringactor/cluster"
	"github.com/ringactor/ringactor/internal/demo"
	"github.com/ringactor/ringactor/internal/demo/demomsg"
)

// The churn client (mode "churn") drives the counter kind over the
// identities c0 … c<n-1> from its workers, each request with
// churnDeadline, and writes one record per request to the file at
// churnOutEnv: "identity activation count send_ns recv_ns class", class
// being ok, timeout, unavailable, remote:<kind>, mismatch or
// untyped:<error>. It prints READY once every identity has answered once.
// On "KILLED <addr> <unix ns>" it probes the identities last answered by
// that member until each answers from another (at most churnProbeFor) and
// prints "RECOVERY <addr> <recovered> <victims> <worst ns>"; on "STOP" it
// stops, prints "RESULT <json>" and exits.
const (
	churnOutEnv        = "RINGACTOR_CHURN_OUT"
	churnIdentitiesEnv = "RINGACTOR_CHURN_IDENTITIES"
	churnWorkersEnv    = "RINGACTOR_CHURN_WORKERS"
	churnMembersEnv    = "RINGACTOR_CHURN_MEMBERS"

	churnDeadline = 2 * time.Second
	churnProbeFor = 15 * time.Second
)

// churnResult is what a churn client reports when it stops.
type churnResult struct {
	Requests int `json:"requests"`
}

// churnRecorder writes the records of one client.
type churnRecorder struct {
	mu   sync.Mutex
	w    *bufio.Writer
	n    int
	last map[string]string // identity → activation of its last reply
}

func (r *churnRecorder) record(id string, rep demomsg.CounterReply, send, recv time.Time, err error) {
	class := "ok"
	var re *cluster.RemoteError
	switch {
	case err == nil:
	case errors.Is(err, cluster.ErrClusterMismatch):
		class = "mismatch"
	case errors.Is(err, cluster.ErrTimeout):
		class = "timeout"
	case errors.As(err, &re):
		class = "remote:" + re.Kind
	case errors.Is(err, cluster.ErrMemberUnavailable):
		class = "unavailable"
	default:
		class = "untyped:" + strings.ReplaceAll(err.Error(), " ", "_")
	}
	act := rep.Activation
	if act == "" {
		act = "-"
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	fmt.Fprintf(r.w, "%s %s %d %d %d %s\n", id, act, rep.Count, send.UnixNano(), recv.UnixNano(), class)
	r.n++
	if err == nil && !isDeviceID(id) {
		r.last[id] = rep.Activation
	}
}

func envInt(name string, def int) int {
	if v, err := strconv.Atoi(os.Getenv(name)); err == nil && v > 0 {
		return v
	}
	return def
}

func runChurnClient() int {
	ids := envInt(churnIdentitiesEnv, 100)
	workers := envInt(churnWorkersEnv, 8)
	f, err := os.Create(os.Getenv(churnOutEnv))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer f.Close()
	rec := &churnRecorder{w: bufio.NewWriterSize(f, 1<<16), last: map[string]string{}}
	demo.Register()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	p, err := provider()
	if err == nil {
		var cl *cluster.Member
		cl, err = cluster.Start(ctx, clusterName, p, nil, cluster.AsClient(), cluster.WithLogger(actors.DiscardLogger()))
		if err == nil {
			defer func() {
				cctx, ccancel := context.WithTimeout(context.Background(), 10*time.Second)
				defer ccancel()
				if err := cl.Close(cctx); err != nil {
					fmt.Fprintln(os.Stderr, "close:", err)
				}
			}()
			err = cl.WaitMembers(ctx, envInt(churnMembersEnv, 1))
			if err == nil {
				cancel()
				err = churn(cl, rec, ids, workers)
			}
		}
	}
	cancel()
	if ferr := rec.w.Flush(); err == nil {
		err = ferr
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "churn client:", err)
		return 1
	}
	b, _ := json.Marshal(churnResult{Requests: rec.n})
	fmt.Printf("RESULT %s\n", b)
	return 0
}

func churnID(i int) string { return fmt.Sprintf("c%d", i) }

// deviceID is the identity of the device kind (devpref) a churn worker
// asks in every fourth request.
func deviceID(i int) string { return fmt.Sprintf("g%d", i) }

// isDeviceID reports whether a churn record is of the device kind.
func isDeviceID(id string) bool { return strings.HasPrefix(id, "g") }

// bumpDevice sends one devpref request with deadline d and records it:
// its count is the activation's device count, its activation the
// stamped placement (HOST:PORT/cuda:sim or HOST:PORT/cpu).
func bumpDevice(cl *cluster.Member, rec *churnRecorder, id string, d time.Duration) {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	send := time.Now()
	rep, err := cluster.Request[demomsg.DevscaleReply](ctx, cl, "devpref", id, demomsg.DevscaleRequest{})
	rec.record(id, demomsg.CounterReply{Count: int64(rep.Calls), Activation: rep.PlacementText()}, send, time.Now(), err)
}

// bumpOnce sends one counter request with deadline d and records it.
func bumpOnce(cl *cluster.Member, rec *churnRecorder, id string, d time.Duration) (demomsg.CounterReply, error) {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	send := time.Now()
	rep, err := cluster.Request[demomsg.CounterReply](ctx, cl, "counter", id, demomsg.CounterRequest{})
	rec.record(id, rep, send, time.Now(), err)
	return rep, err
}

func churn(cl *cluster.Member, rec *churnRecorder, ids, workers int) error {
	// Warm-up: every identity answers once (retrying within a minute).
	warm := time.Now().Add(time.Minute)
	for i := range ids {
		for {
			if _, err := bumpOnce(cl, rec, churnID(i), churnDeadline); err == nil {
				break
			} else if time.Now().After(warm) {
				return fmt.Errorf("warm-up %s: %w", churnID(i), err)
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
				if rnd.IntN(4) == 0 {
					bumpDevice(cl, rec, deviceID(rnd.IntN(ids)), churnDeadline)
					continue
				}
				_, _ = bumpOnce(cl, rec, churnID(rnd.IntN(ids)), churnDeadline)
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
		case len(f) == 3 && f[0] == "KILLED":
			at, err := strconv.ParseInt(f[2], 10, 64)
			if err != nil {
				return fmt.Errorf("bad kill notice %q", in.Text())
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				probe(cl, rec, f[1], time.Unix(0, at))
			}()
		default:
			return fmt.Errorf("unknown command %q", in.Text())
		}
	}
	return errors.New("stdin closed before STOP")
}

// probe requests the identities whose last reply came from the member at
// addr until each answers from another member, and prints how many did
// and the latest of their first answers after the kill.
func probe(cl *cluster.Member, rec *churnRecorder, addr string, killed time.Time) {
	rec.mu.Lock()
	var victims []string
	for id, act := range rec.last {
		if strings.HasPrefix(act, addr+"/") {
			victims = append(victims, id)
		}
	}
	rec.mu.Unlock()
	var (
		mu        sync.Mutex
		worst     time.Duration
		recovered int
		wg        sync.WaitGroup
	)
	end := killed.Add(max(churnProbeFor, bound(5*time.Second)))
	for _, id := range victims {
		wg.Add(1)
		go func() {
			defer wg.Done()
			last := "not asked"
			for time.Now().Before(end) {
				rep, err := bumpOnce(cl, rec, id, time.Second)
				if err == nil && !strings.HasPrefix(rep.Activation, addr+"/") {
					mu.Lock()
					recovered++
					worst = max(worst, time.Since(killed))
					mu.Unlock()
					return
				}
				if last = fmt.Sprint(err); err == nil {
					last = "answered from " + rep.Activation
				}
			}
			// Named on stderr, which the test shows when recovery fails.
			fmt.Fprintf(os.Stderr, "%s (last on %s) did not answer again; its last request: %s\n", id, addr, last)
		}()
	}
	wg.Wait()
	fmt.Printf("RECOVERY %s %d %d %d\n", addr, recovered, len(victims), worst.Nanoseconds())
}
