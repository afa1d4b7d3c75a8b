package multiproc

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/ringactor/ringactor/actors"
	"github.com/ringactor/ringactor/cluster"
	"github.com/ringactor/ringactor/internal/demo"
	"github.com/ringactor/ringactor/internal/demo/demomsg"
)

// devIdentitiesEnv sets the devices scenario's identities of the
// device-only kind (default devIdentitiesCI; the full size is 1000).
const (
	devIdentitiesEnv = "RINGACTOR_DEVICE_IDENTITIES"
	devIdentitiesCI  = 300
	devPrefIDs       = 40 // identities of the device-preferred kind
	devCallDeadline  = 30 * time.Second
	// Without a device member, device-only calls end at their deadline:
	// this many, with this deadline.
	devNoCapacityIDs      = 10
	devNoCapacityDeadline = 2 * time.Second
	// A call that takes longer is reported on the client's stderr.
	slowCall = 3 * time.Second
	// A call that failed with ErrMemberUnavailable is asked again after
	// retryFirst, then after twice the last pause, up to retryMax.
	retryFirst = 10 * time.Millisecond
	retryMax   = 500 * time.Millisecond
	// The client prints a progress line (CALLED) every this many calls:
	// the test's hang guard (devPhaseIdle) counts from the last one.
	devProgressEvery = 10
)

// devicesPhase is what one phase of the devices scenario saw.
type devicesPhase struct {
	Kind       string
	ByMember   map[string]int // member address → identities answered there
	ByDevice   map[string]int // "HOST:PORT/cuda:simN" → identities
	NoCapacity int            // typed ErrNoCapacity outcomes
	Fallback   int            // identities PlacementOf called a fallback
	Errors     []string       // other failures (at most 10)
	Failed     int
	Retried    int // requests asked again after ErrMemberUnavailable
	// Where the time went: the slowest call, and how many took over a
	// second.
	Slowest     time.Duration
	OverASecond int
}

// runDevicesClient calls every identity of devscale (device only) and
// devpref (device preferred) once per phase, printing each phase's result;
// the test moves it to the next phase by a line on stdin: "next ADDR"
// after killing the member at ADDR (the phase after the second kill calls
// a few device-only identities with a short deadline: ErrNoCapacity), or
// "again" after a member's devices faulted.
func runDevicesClient() int {
	demo.Register()
	// A hang guard: the test's per-phase guard (devPhaseIdle) ends it
	// sooner when it hangs.
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Minute)
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
		_ = cl.Close(cctx)
	}()
	if err := cl.WaitMembers(ctx, 3); err != nil {
		fmt.Fprintln(os.Stderr, "waiting for members:", err)
		return 1
	}
	n := envInt(devIdentitiesEnv, devIdentitiesCI)
	in := bufio.NewScanner(os.Stdin)
	gone := 0 // members killed so far
	for phase := 0; ; phase++ {
		devN, devDeadline := n, devCallDeadline
		if gone == 2 {
			// No device member is left: each call waits for one until its
			// deadline, then fails with ErrNoCapacity.
			devN, devDeadline = devNoCapacityIDs, devNoCapacityDeadline
		}
		for _, k := range []struct {
			kind     string
			n        int
			deadline time.Duration
		}{{"devscale", devN, devDeadline}, {"devpref", devPrefIDs, devCallDeadline}} {
			began := time.Now()
			res := devicesRound(ctx, cl, k.kind, k.n, k.deadline)
			fmt.Fprintf(os.Stderr, "%s phase %d %s: %d calls in %v, the slowest %v, %d over a second, %d asked again\n", time.Now().Format("15:04:05.000"),
				phase, k.kind, k.n, time.Since(began).Round(time.Millisecond), res.Slowest.Round(time.Millisecond), res.OverASecond, res.Retried)
			b, _ := json.Marshal(res)
			fmt.Printf("PHASE%d %s\n", phase, b)
		}
		if !in.Scan() {
			return 0
		}
		line := strings.TrimSpace(in.Text())
		if line == "again" { // a member's devices faulted: it stays
			continue
		}
		addr, ok := strings.CutPrefix(line, "next ")
		if !ok {
			return 0
		}
		gone++
		// The killed member must have left this client's topology first.
		for memberReady(cl, addr) {
			select {
			case <-ctx.Done():
				fmt.Fprintln(os.Stderr, "the killed member stayed in the topology:", addr)
				return 1
			case <-time.After(50 * time.Millisecond):
			}
		}
	}
}

// memberReady reports whether addr is a ready member in cl's topology.
func memberReady(cl *cluster.Member, addr string) bool {
	for _, m := range cl.Status().Members {
		if m.Address == addr && m.State == cluster.MemberReady {
			return true
		}
	}
	return false
}

// devicesRound calls each of n identities of kind once.
func devicesRound(ctx context.Context, cl *cluster.Member, kind string, n int, deadline time.Duration) devicesPhase {
	r := devicesPhase{Kind: kind, ByMember: map[string]int{}, ByDevice: map[string]int{}}
	for i := range n {
		id := fmt.Sprintf("d%d", i)
		cctx, cancel := context.WithTimeout(ctx, deadline)
		var rep demomsg.DevscaleReply
		var err error
		began := time.Now()
		asked := 0
		if i > 0 && i%devProgressEvery == 0 {
			fmt.Printf("CALLED %s %d of %d\n", kind, i, n)
		}
		for backoff := retryFirst; ; backoff = min(2*backoff, retryMax) {
			asked++
			rep, err = cluster.Request[demomsg.DevscaleReply](cctx, cl, kind, id, demomsg.DevscaleRequest{})
			if !errors.Is(err, cluster.ErrMemberUnavailable) || cctx.Err() != nil {
				break
			}
			// Its member died with the request in flight (a typed
			// outcome): the caller asks again, as the churn test's do,
			// after a pause that grows (the topology moves on meanwhile).
			r.Retried++
			t := time.NewTimer(backoff)
			select {
			case <-t.C:
			case <-cctx.Done():
				t.Stop()
			}
		}
		cancel()
		took := time.Since(began)
		r.Slowest = max(r.Slowest, took)
		if took > time.Second {
			r.OverASecond++
		}
		if took > slowCall {
			// Where a slow phase spends its time (printed on stderr,
			// which the test shows when a phase does not finish).
			pl, plErr := cl.PlacementOf(kind, id)
			fmt.Fprintf(os.Stderr, "%s slow call %s/%s: %v, asked %d times, err %v, answered %q, placement %+v (%v)\n",
				time.Now().Format("15:04:05.000"), kind, id, took.Round(time.Millisecond), asked, err, rep.PlacementText(), pl, plErr)
		}
		switch {
		case errors.Is(err, cluster.ErrNoCapacity):
			r.NoCapacity++
			continue
		case err != nil:
			r.Failed++
			if len(r.Errors) < 10 {
				r.Errors = append(r.Errors, fmt.Sprintf("%s/%s: %v", kind, id, err))
			}
			continue
		}
		where := rep.PlacementText()
		addr, _, _ := strings.Cut(where, "/")
		r.ByMember[addr]++
		r.ByDevice[where]++
		if pl, err := cl.PlacementOf(kind, id); err == nil && pl.Fallback {
			r.Fallback++
		}
	}
	return r
}
