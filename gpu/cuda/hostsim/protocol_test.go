//go:build linux && cgo

package hostsim

import (
	"math/rand/v2"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/ringactor/ringactor/gpu/ring"
)

// TestGateClosed: with the gate closed nothing is consumed; opening it
// delivers everything, in order.
func TestGateClosed(t *testing.T) {
	k := launch(t, Config{Capacity: 16})
	var m ReduceMsg
	m.N = 1
	for i := range 16 {
		m.X[0] = float32(i)
		pushWait(t, k.Input(), MsgSum, uint64(i), &m)
	}
	if TryPush(k.Input(), MsgSum, 99, &m) {
		t.Fatal("a full ring accepted a push")
	}
	time.Sleep(50 * time.Millisecond)
	if p := k.Control().Processed.Load(); p != 0 || k.Output().Len() != 0 || k.Input().Len() != 16 {
		t.Fatalf("gate closed but processed=%d out=%d in=%d", p, k.Output().Len(), k.Input().Len())
	}
	k.Control().Open()
	for i := range 16 {
		h, p := popWait(t, k.Output())
		if r := decode[ScalarReply](t, h, p); h.CorrelationID != uint64(i) || r.Value != float64(i) {
			t.Fatalf("reply %d: corr %d value %v", i, h.CorrelationID, r.Value)
		}
	}
	k.Control().Close()
	pushWait(t, k.Input(), MsgSum, 100, &m)
	time.Sleep(20 * time.Millisecond)
	if k.Control().Processed.Load() != 16 {
		t.Fatal("closing the gate again did not stop consumption")
	}
}

// TestTerminateDrain: terminate with drain handles what is queued (even
// with the gate closed), then acks.
func TestTerminateDrain(t *testing.T) {
	k := launch(t, Config{Capacity: 8})
	var m ReduceMsg
	for i := range 5 {
		pushWait(t, k.Input(), MsgSum, uint64(i), &m)
	}
	k.Terminate(ring.TerminateDrain)
	if ack := k.Wait(); ack != ring.Terminated {
		t.Fatalf("ack %d", ack)
	}
	if n := k.Output().Len(); n != 5 || k.Input().Len() != 0 || k.Control().Processed.Load() != 5 {
		t.Fatalf("drained %d replies, input left %d", n, k.Input().Len())
	}
	if !k.Control().Snapshot().Terminated {
		t.Fatal("snapshot does not show the ack")
	}
}

// TestTerminateNow leaves queued messages in the ring.
func TestTerminateNow(t *testing.T) {
	k := launch(t, Config{Capacity: 8})
	var m ReduceMsg
	for i := range 5 {
		pushWait(t, k.Input(), MsgSum, uint64(i), &m)
	}
	k.Terminate(ring.TerminateNow)
	if ack := k.Wait(); ack != ring.Terminated {
		t.Fatalf("ack %d", ack)
	}
	if k.Input().Len() != 5 || k.Control().Processed.Load() != 0 {
		t.Fatalf("input %d processed %d", k.Input().Len(), k.Control().Processed.Load())
	}
}

// TestBadLaunch: a block size that is not a power of two exits at once.
func TestBadLaunch(t *testing.T) {
	k := launch(t, Config{Threads: 3})
	if ack := k.Wait(); ack != ring.TerminatedBadLaunch {
		t.Fatalf("ack %d", ack)
	}
}

// TestLoopsRunAtOnce: each persistent loop has __shared__ state of its
// own, so several run at once, each answering its own ring with its own
// values (shared state between them would mix the replies up).
func TestLoopsRunAtOnce(t *testing.T) {
	const loops, msgs = 4, 50
	ks := make([]*Kernel, loops)
	for i := range ks {
		ks[i] = launch(t, Config{Capacity: 8, Threads: 2})
		ks[i].Control().Open()
	}
	var wg sync.WaitGroup
	for i, k := range ks {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var m ReduceMsg
			m.N = 1
			deadline := time.Now().Add(10 * time.Second)
			for j := range msgs {
				m.X[0] = float32(1000*i + j)
				for !TryPush(k.Input(), MsgSum, uint64(j), &m) {
					runtime.Gosched()
				}
				h, p, ok := k.Output().TryPop()
				for ; !ok && time.Now().Before(deadline); h, p, ok = k.Output().TryPop() {
					runtime.Gosched()
				}
				r, err := Decode[ScalarReply](p)
				if !ok || err != nil || h.CorrelationID != uint64(j) || r.Value != float64(1000*i+j) {
					t.Errorf("loop %d reply %d: ok %v err %v corr %d value %v", i, j, ok, err, h.CorrelationID, r.Value)
					return
				}
			}
		}()
	}
	wg.Wait()
	for i, k := range ks {
		if p := k.Control().Processed.Load(); p != msgs {
			t.Errorf("loop %d processed %d", i, p)
		}
	}
}

// TestStress pushes 10,000 add messages of random sizes from one goroutine
// while another pops: no loss, no duplicate, no reordering, right sums.
func TestStress(t *testing.T) {
	const total = 10000
	k := launch(t, Config{Capacity: 32, Threads: 4})
	k.Control().Open()
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		rng := rand.New(rand.NewPCG(3, 4))
		var m VecMsg
		for i := range uint64(total) {
			m.N = uint32(rng.IntN(VecMax + 1))
			for j := range m.N {
				m.A[j] = float32(i)
				m.B[j] = float32(j)
			}
			for !TryPush(k.Input(), MsgAdd, i, &m) {
				time.Sleep(time.Microsecond)
			}
		}
	}()
	rng := rand.New(rand.NewPCG(3, 4))
	deadline := time.Now().Add(60 * time.Second)
	for i := uint64(0); i < total; {
		h, p, ok := k.Output().TryPop()
		if !ok {
			if time.Now().After(deadline) {
				t.Fatalf("stalled after %d replies", i)
			}
			time.Sleep(time.Microsecond)
			continue
		}
		n := uint32(rng.IntN(VecMax + 1))
		if h.CorrelationID != i {
			t.Fatalf("reply %d has correlation id %d", i, h.CorrelationID)
		}
		r := decode[VecReply](t, h, p)
		if r.N != n {
			t.Fatalf("reply %d: n %d, want %d", i, r.N, n)
		}
		for j := range n {
			if r.Y[j] != float32(i)+float32(j) {
				t.Fatalf("reply %d [%d] = %v", i, j, r.Y[j])
			}
		}
		i++
	}
	wg.Wait()
	if _, _, ok := k.Output().TryPop(); ok {
		t.Fatal("a duplicate reply")
	}
	if st := k.Control().Snapshot(); st.Processed != total || st.Errors != 0 {
		t.Fatalf("%+v", st)
	}
}
