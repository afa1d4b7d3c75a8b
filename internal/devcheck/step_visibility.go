package devcheck

import (
	"bytes"
	"context"
	"fmt"
	"github.com/ringactor/ringactor/internal/devkernels"
	"math/rand/v2"
	"reflect"
	"time"

	"github.com/ringactor/ringactor/gpu/cuda"
	"github.com/ringactor/ringactor/gpu/ring"
	"github.com/ringactor/ringactor/messages"
)

// visibilityStep drives a ring program through the cuda API, without the
// actors pump: host release stores seen by the kernel's system-scope
// acquire loads through mapped memory, each reply's payload visible before
// its output index, the terminated ack after drain and after immediate
// terminate, and %globaltimer tracking the host's Unix clock.
var visibilityStep = Step{
	Name:    "visibility",
	Checks:  "memory visibility through mapped memory: every reply complete and in order under a full ring, terminate drain and now acknowledged, %globaltimer near host time",
	Timeout: 60 * time.Second,
	run:     runVisibility,
}

// saxpyProgram is SAXPY as a ring program source.
func saxpyProgram() (*cuda.RingProgramSource, error) { return saxpyVariant("saxpy", saxpyCUDA) }

// saxpyVariant is SAXPY's program under name with code as its handler
// source: a comment added to saxpyCUDA makes another source, compiled and
// loaded on its own.
func saxpyVariant(name, code string) (*cuda.RingProgramSource, error) {
	return cuda.NewRingProgramSource(cuda.RingProgramSpec{Name: name, Code: code, Handler: "saxpy",
		Req: reflect.TypeFor[devkernels.SaxpyReq](), Resp: reflect.TypeFor[devkernels.SaxpyResp]()})
}

// launchSaxpyRing loads SAXPY on b and launches one ring of capacity
// slots, gate open.
func launchSaxpyRing(ctx context.Context, b *cuda.Backend, capacity int) (*cuda.RingKernel, error) {
	src, err := saxpyProgram()
	if err != nil {
		return nil, err
	}
	p, err := b.LoadRingProgram(ctx, src)
	if err != nil {
		return nil, fmt.Errorf("loading the ring program: %w", err)
	}
	k, err := b.LaunchRingProgram(p, cuda.RingConfig{Capacity: capacity})
	if err != nil {
		return nil, fmt.Errorf("launching the ring program: %w", err)
	}
	k.Activate()
	return k, nil
}

func randomSaxpy(rng *rand.Rand, n int) []devkernels.SaxpyReq {
	msgs := make([]devkernels.SaxpyReq, n)
	for i := range msgs {
		m := &msgs[i]
		m.N = uint32(rng.IntN(devkernels.VecLen + 1))
		if rng.IntN(100) == 0 {
			m.N = devkernels.VecLen + 1 + uint32(rng.IntN(1000)) // refused by the handler
		}
		m.A = float32(rng.NormFloat64() * 10)
		for j := range min(m.N, devkernels.VecLen) {
			m.X[j], m.Y[j] = float32(rng.NormFloat64()*1e3), float32(rng.NormFloat64()*1e-3)
		}
	}
	return msgs
}

func runVisibility(ctx context.Context, e *Env) error {
	b, err := e.Backend()
	if err != nil {
		return err
	}
	const capacity = 16
	k, err := launchSaxpyRing(ctx, b, capacity)
	if err != nil {
		return err
	}
	n := pick(e, 2000, 20000, 100000)
	msgs := randomSaxpy(rand.New(rand.NewPCG(28, 1)), n)
	fallback := saxpyFallback("saxpy")()
	e.Progress("%d messages through a ring of %d slots", n, capacity)
	start := time.Now()
	if err := exchangeAll(ctx, k, msgs, func(i int, h ring.SlotHeader, payload []byte) error {
		want, werr := fallback(ctx, msgs[i])
		if werr != nil {
			if h.Status != 1 {
				return fmt.Errorf("message %d: status %d, want 1 (refused)", i, h.Status)
			}
			return nil
		}
		if h.Status != ring.StatusOK || !bytes.Equal(payload, messages.FixedBytes(&want)) {
			return fmt.Errorf("message %d: status %d, payload differs from the fallback's (a reply seen before its bytes?)", i, h.Status)
		}
		return nil
	}); err != nil {
		return err
	}
	e.Set("messages", n)
	e.Set("rate_per_s", float64(n)/time.Since(start).Seconds())
	hb := int64(k.Control().Heartbeat.Load())
	skew := time.Since(time.Unix(0, hb))
	e.Set("heartbeat_skew_ms", ms(skew))
	if skew < -5*time.Second || skew > 5*time.Second {
		return fmt.Errorf("the loop's heartbeat (%%globaltimer) is %v from host time", skew)
	}

	e.Progress("terminate drain with messages queued")
	for i := range capacity / 2 {
		if ok, err := k.TrySubmit(1, uint64(i), messages.FixedBytes(&msgs[i])); !ok || err != nil {
			return fmt.Errorf("submit before drain: %v, %v", ok, err)
		}
	}
	k.Terminate(ring.TerminateDrain)
	wctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	if err := k.Wait(wctx); err != nil {
		return fmt.Errorf("wait after drain: %w", err)
	}
	got := 0
	for {
		if _, _, ok := k.TryPoll(); !ok {
			break
		}
		got++
	}
	if got != capacity/2 {
		return fmt.Errorf("drain answered %d of %d queued messages", got, capacity/2)
	}

	e.Progress("terminate now on a fresh ring")
	k2, err := launchSaxpyRing(ctx, b, capacity)
	if err != nil {
		return err
	}
	k2.Terminate(ring.TerminateNow)
	if err := k2.Wait(wctx); err != nil {
		return fmt.Errorf("wait after terminate now: %w", err)
	}
	return nil
}

// exchangeAll sends msgs through k as fast as the ring takes them and
// checks each reply (in order, by correlation id) with check.
func exchangeAll(ctx context.Context, k *cuda.RingKernel, msgs []devkernels.SaxpyReq, check func(i int, h ring.SlotHeader, payload []byte) error) error {
	buf := make([]byte, k.PayloadMax())
	sent, recv := 0, 0
	w := ring.Waiter{Strategy: ring.WaitStrategy{Spins: 64, Yields: 64, SleepMin: time.Microsecond, SleepMax: 100 * time.Microsecond}, Done: ctx.Done()}
	for recv < len(msgs) {
		progress := false
		for sent < len(msgs) {
			ok, err := k.TrySubmit(1, uint64(sent), messages.FixedBytes(&msgs[sent]))
			if err != nil {
				return err
			}
			if !ok {
				break
			}
			sent++
			progress = true
		}
		for {
			h, n, ok := k.TryPollInto(buf)
			if !ok {
				break
			}
			if h.CorrelationID != uint64(recv) {
				return fmt.Errorf("reply to %d, want %d (out of order)", h.CorrelationID, recv)
			}
			if err := check(recv, h, buf[:n]); err != nil {
				return err
			}
			recv++
			progress = true
		}
		if progress {
			w.Reset()
			continue
		}
		if err := k.Fault(); err != nil {
			return fmt.Errorf("device fault: %w", err)
		}
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("%d of %d replies: %w", recv, len(msgs), err)
		}
		w.Wait(nil, nil)
	}
	return nil
}
