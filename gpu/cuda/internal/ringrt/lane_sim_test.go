//go:build linux && cgo

package ringrt

import (
	"errors"
	"reflect"
	"testing"
	"time"

	"github.com/ringactor/ringactor/gpu"
	"github.com/ringactor/ringactor/gpu/ring"
	"github.com/ringactor/ringactor/messages"
)

// hopMsg travels down a chain of device lanes: each stage adds 1 to Hops
// and fails (status 7) when Hops+1 == Fail.
type hopMsg struct {
	Src  uint32
	Hops uint32
	Seq  uint64
	Fail uint32
	_    uint32
}

const hopCode = `
__device__ uint32_t hop(const rc_ctx *ctx, const hopMsg *req, hopMsg *resp, rc_no_state *) {
	if (ctx->thread == 0) {
		*resp = *req;
		resp->Hops = req->Hops + 1;
	}
	if (req->Fail != 0 && req->Hops + 1 == req->Fail) return 7;
	return RC_STATUS_OK;
}`

func hopSpec(name string) ProgramSpec {
	return ProgramSpec{Name: name, Code: hopCode, Handler: "hop", Req: reflect.TypeFor[hopMsg](), Resp: reflect.TypeFor[hopMsg]()}
}

// openHops opens n mailboxes of p, gates open.
func openHops(t *testing.T, b *Runtime, p *Program, n, capacity int) []*Kernel {
	t.Helper()
	ks := make([]*Kernel, n)
	for i := range ks {
		k, err := b.Open(p, Config{Threads: 4, Capacity: capacity})
		if err != nil {
			t.Fatal(err)
		}
		ks[i] = k
	}
	return ks
}

// chainHops links ks[0] → ks[1] → … with lanes of capacity slots, stage i+1.
func chainHops(t *testing.T, b *Runtime, ks []*Kernel, capacity int) {
	t.Helper()
	for i := 0; i+1 < len(ks); i++ {
		if _, err := b.Link(ks[i], ks[i+1], LaneConfig{Capacity: capacity, Stage: uint32(i + 1)}); err != nil {
			t.Fatal(err)
		}
	}
}

// pollReply waits for k's next reply, under a hang deadline.
func pollReply(t *testing.T, k *Kernel) (ring.SlotHeader, hopMsg) {
	t.Helper()
	deadline := hangDeadline(t)
	for {
		if h, p, ok := k.TryPoll(); ok {
			var m hopMsg
			if h.Status == ring.StatusOK {
				var err error
				if m, err = messages.DecodeFixed[hopMsg](p); err != nil {
					t.Fatal(err)
				}
			}
			return h, m
		}
		if time.Now().After(deadline) {
			t.Fatal("no reply before the hang deadline")
		}
		time.Sleep(20 * time.Microsecond)
	}
}

func closeAll(t *testing.T, ks []*Kernel) {
	t.Helper()
	for _, k := range ks {
		k.Terminate(ring.TerminateDrain)
	}
	ctx, cancel := hangCtx(t)
	defer cancel()
	for _, k := range ks {
		if err := k.Close(ctx); err != nil {
			t.Fatal(err)
		}
	}
}

// TestLaneChainPipelined: a 4-mailbox chain (two programs, so lanes cross
// grids both ways) answers every request once, in order, at the tail,
// with messages pipelined through it; an error of stage 2 reaches the
// tail with its origin; nothing comes out of the head's output ring.
func TestLaneChainPipelined(t *testing.T) {
	b, fd := newSimBackend(t, nil)
	fd.SetExecShape(2, 4)
	pa, pb := loadProgram(t, b, hopSpec("hopa")), loadProgram(t, b, hopSpec("hopb"))
	ks := []*Kernel{}
	for i := range 4 {
		p := pa
		if i%2 == 1 {
			p = pb
		}
		ks = append(ks, openHops(t, b, p, 1, 8)...)
	}
	chainHops(t, b, ks, 4)
	for _, k := range ks {
		k.Activate()
	}
	head, tail := ks[0], ks[3]
	n := 2000
	if testing.Short() || raceEnabled {
		n = 300
	}
	done := make(chan error, 1)
	go func() {
		for i := range n {
			m := hopMsg{Seq: uint64(i)}
			if i%97 == 5 {
				m.Fail = 2
			}
			for {
				ok, err := head.TrySubmit(1, uint64(i), messages.FixedBytes(&m))
				if err != nil {
					done <- err
					return
				}
				if ok {
					break
				}
				time.Sleep(10 * time.Microsecond) // a full head ring: backpressure from the chain
			}
		}
		done <- nil
	}()
	for i := range n {
		h, m := pollReply(t, tail)
		if h.CorrelationID != uint64(i) {
			t.Fatalf("reply %d has correlation %d", i, h.CorrelationID)
		}
		if i%97 == 5 {
			if h.Status != 7 || h.Flags>>ring.FlagOriginShift != 2 {
				t.Fatalf("reply %d: status %d flags %#x, want 7 from stage 2", i, h.Status, h.Flags)
			}
			continue
		}
		if h.Status != ring.StatusOK || m.Hops != 4 || m.Seq != uint64(i) {
			t.Fatalf("reply %d: status %d %+v", i, h.Status, m)
		}
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if _, _, ok := head.TryPoll(); ok {
		t.Fatal("a reply came out of the head's output ring")
	}
	closeAll(t, ks)
}

// TestLaneFanIn: 8 upstreams into one downstream, each message once, in
// order per upstream.
func TestLaneFanIn(t *testing.T) {
	b, fd := newSimBackend(t, nil)
	fd.SetExecShape(2, 4)
	p := loadProgram(t, b, hopSpec("hopf"))
	ups := openHops(t, b, p, 8, 8)
	down := openHops(t, b, p, 1, 16)[0]
	for _, u := range ups {
		if _, err := b.Link(u, down, LaneConfig{Capacity: 4, Stage: 1}); err != nil {
			t.Fatal(err)
		}
	}
	down.Activate()
	for _, u := range ups {
		u.Activate()
	}
	per := 1000
	if testing.Short() || raceEnabled {
		per = 150
	}
	errs := make(chan error, len(ups))
	for s, u := range ups {
		go func() {
			for i := range per {
				m := hopMsg{Src: uint32(s), Seq: uint64(i)}
				for {
					ok, err := u.TrySubmit(1, uint64(s)<<32|uint64(i), messages.FixedBytes(&m))
					if err != nil {
						errs <- err
						return
					}
					if ok {
						break
					}
					time.Sleep(10 * time.Microsecond)
				}
			}
			errs <- nil
		}()
	}
	next := make([]uint64, len(ups))
	for range len(ups) * per {
		h, m := pollReply(t, down)
		if h.Status != ring.StatusOK || m.Hops != 2 || int(m.Src) >= len(ups) {
			t.Fatalf("reply: status %d %+v", h.Status, m)
		}
		if m.Seq != next[m.Src] {
			t.Fatalf("upstream %d: message %d, want %d", m.Src, m.Seq, next[m.Src])
		}
		next[m.Src]++
	}
	for range ups {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	closeAll(t, append(ups, down))
}

// TestLaneBackpressure: with the downstream's gate closed the lane fills,
// the upstream stops taking input (its ring fills), nothing is lost; once
// the gate opens every message arrives in order.
func TestLaneBackpressure(t *testing.T) {
	b, _ := newSimBackend(t, nil)
	p := loadProgram(t, b, hopSpec("hopb"))
	ks := openHops(t, b, p, 2, 4)
	chainHops(t, b, ks, 2)
	up, down := ks[0], ks[1]
	up.Activate()
	// 2 in the lane, 1 in the upstream's hand at most, 4 in its ring.
	sent := 0
	deadline := hangDeadline(t)
	for stalls := 0; stalls < 200; {
		m := hopMsg{Seq: uint64(sent)}
		ok, err := up.TrySubmit(1, uint64(sent), messages.FixedBytes(&m))
		if err != nil {
			t.Fatal(err)
		}
		if ok {
			sent++
			stalls = 0
			continue
		}
		stalls++
		if time.Now().After(deadline) {
			t.Fatal("hang")
		}
		time.Sleep(100 * time.Microsecond)
	}
	if sent > 2+4+1 || sent < 4 {
		t.Fatalf("%d messages taken with a closed downstream: want the lane (2) and the ring (4) full", sent)
	}
	if _, _, ok := down.TryPoll(); ok {
		t.Fatal("a reply from a gated downstream")
	}
	down.Activate()
	for i := range sent {
		h, m := pollReply(t, down)
		if h.CorrelationID != uint64(i) || m.Seq != uint64(i) || m.Hops != 2 {
			t.Fatalf("reply %d: %+v %+v", i, h, m)
		}
	}
	closeAll(t, ks)
}

// TestLaneDownstreamTerminated: once the downstream finished, its lane is
// closed and the upstream's replies come out of its own output ring (the
// host relays them); the downstream drained what the lane held.
func TestLaneDownstreamTerminated(t *testing.T) {
	b, _ := newSimBackend(t, nil)
	p := loadProgram(t, b, hopSpec("hopt"))
	ks := openHops(t, b, p, 2, 8)
	chainHops(t, b, ks, 4)
	up, down := ks[0], ks[1]
	up.Activate()
	down.Activate()
	for i := range 3 {
		m := hopMsg{Seq: uint64(i)}
		if ok, err := up.TrySubmit(1, uint64(i), messages.FixedBytes(&m)); !ok || err != nil {
			t.Fatal(ok, err)
		}
	}
	for i := range 3 {
		if h, m := pollReply(t, down); m.Seq != uint64(i) || m.Hops != 2 {
			t.Fatalf("reply %d: %+v %+v", i, h, m)
		}
	}
	down.Terminate(ring.TerminateDrain)
	ctx, cancel := hangCtx(t)
	defer cancel()
	if err := down.Wait(ctx); err != nil {
		t.Fatal(err)
	}
	for i := 3; i < 6; i++ {
		m := hopMsg{Seq: uint64(i)}
		if ok, err := up.TrySubmit(1, uint64(i), messages.FixedBytes(&m)); !ok || err != nil {
			t.Fatal(ok, err)
		}
		if h, m := pollReply(t, up); m.Seq != uint64(i) || m.Hops != 1 || h.CorrelationID != uint64(i) {
			t.Fatalf("relayed reply %d: %+v %+v", i, h, m)
		}
	}
	closeAll(t, []*Kernel{up})
}

// TestLaneRefused: a cycle, a mailbox to itself, a second lane out, a
// mailbox that took messages and mismatched sizes are gpu.ErrArgument.
func TestLaneRefused(t *testing.T) {
	b, _ := newSimBackend(t, nil)
	p := loadProgram(t, b, hopSpec("hopr"))
	ks := openHops(t, b, p, 4, 4)
	chainHops(t, b, ks[:3], 2)
	for _, c := range []struct {
		up, down *Kernel
		cycle    bool
	}{{ks[2], ks[0], true}, {ks[1], ks[1], true}, {ks[0], ks[3], false}} {
		_, err := b.Link(c.up, c.down, LaneConfig{})
		if !errors.Is(err, gpu.ErrArgument) || errors.Is(err, ErrLaneCycle) != c.cycle {
			t.Fatalf("Link: %v (cycle %v)", err, c.cycle)
		}
	}
	ks[3].Activate()
	m := hopMsg{}
	if ok, err := ks[3].TrySubmit(1, 0, messages.FixedBytes(&m)); !ok || err != nil {
		t.Fatal(ok, err)
	}
	extra := openHops(t, b, p, 1, 4)[0]
	if _, err := b.Link(ks[3], extra, LaneConfig{}); !errors.Is(err, gpu.ErrArgument) {
		t.Fatalf("Link from a used mailbox: %v", err)
	}
	sx := loadSaxpy(t, b)
	other := openHops(t, b, sx, 1, 4)[0]
	if _, err := b.Link(extra, other, LaneConfig{}); !errors.Is(err, gpu.ErrArgument) {
		t.Fatalf("Link of mismatched sizes: %v", err)
	}
	closeAll(t, append(ks, extra, other))
}
