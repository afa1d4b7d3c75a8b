package actors

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/cockroachdb/datadriven"

	"github.com/ringactor/ringactor/gpu"
	"github.com/ringactor/ringactor/lifecycle"
)

// TestScenarios runs the datadriven scenarios in testdata/scenarios, in the
// style of etcd-io/raft's rafttest: each file scripts ring kernels through
// lifecycle commands, sends, PID posts and releases of blocking handlers, and
// states the outcome of each step below its "----" line. Run with -rewrite to
// regenerate the expected outputs (then read the diff: an output that breaks
// a documented guarantee is a defect, not a new expectation).
//
// Commands (k is a kernel id; values are "3", "1..5" or "(1, 4, 7)"):
//
//	kernel id=k [capacity=N] [overflow=N] [out=N] [policy=block|reject|drop-oldest]
//	       [drain=process|reject] [handler=echo|block] [fail-on=VALUES] [panic-on=VALUES] [launch=false]
//	launch|activate|deactivate|reactivate id=k
//	terminate id=k [timeout=D] [async]
//	send id=k v=VALUES [timeout=D] [async]
//	request id=k v=VALUES [timeout=D]     (Kernel.Go: admission now, outcome at await)
//	post id=k v=VALUES [request]          (Proto.Actor Send / RequestFuture to the PID)
//	command id=k event=E                  (a lifecycle.Command through the PID)
//	wait-started id=k [n=N]               (a blocking handler has begun n messages)
//	release id=k [n=N]                    (let a blocking handler finish n messages, waiting for each to begin)
//	receive id=k [n=N|all] [timeout=D]    (outcomes from the receive stream)
//	await                                 (outcomes of pending requests, posts, async calls)
//	status id=k
//	check id=k                            (every admitted send/request has exactly one outcome)
//	close
//
// Every wait is on a real event (a handler starting a message, an outcome, a
// sender announcing that it blocks); timeouts appear only where the scenario
// expects the wait to end by its deadline.
func TestScenarios(t *testing.T) {
	datadriven.Walk(t, "testdata/scenarios", func(t *testing.T, path string) {
		s := newScenario(t)
		datadriven.RunTest(t, path, s.run)
	})
}

// wait bounds every wait that the scenario expects to end, as a hang guard
// only (hangCtx: until shortly before go test's -timeout), never as a bound
// on the machine's speed: reaching it is a failure that the output shows.
func (s *scenario) wait() time.Duration { return hangWait(s.t) }

type scenario struct {
	t       *testing.T
	rt      *Runtime
	closed  bool
	quit    chan struct{} // unblocks blocking handlers at the end of the file
	kernels map[string]*scenKernel
	pending []*pendingOutcome
}

type scenKernel struct {
	id      string
	h       *Kernel[num, num]
	started chan int      // a blocking handler reports each message it begins
	release chan struct{} // and waits for one token per message
	took    chan int      // the message that took a token
	begun   []int         // started messages seen by wait-started, not yet released
	values  map[uint64]int
	// exactly-once bookkeeping of admitted sends and requests
	admitted []int
	outcomes map[int]int
}

// pendingOutcome is an outcome printed by the next await.
type pendingOutcome struct {
	label string
	// ch receives the outcome once, as a function that await runs on the
	// test goroutine: it does the bookkeeping and returns the printed text.
	ch     chan func() string
	cancel context.CancelFunc // ends the context of a request, after its outcome
}

func (po *pendingOutcome) put(text string) { po.ch <- func() string { return text } }

func newScenario(t *testing.T) *scenario {
	// The scenario's own actor system, so that dead letters (commands to a
	// terminated kernel's PID) throttle for a millisecond, not a second: the
	// throttle's goroutine ends before goleak looks.
	sys := actor.NewActorSystemWithConfig(actor.Configure(
		actor.WithDeadLetterThrottleInterval(time.Millisecond),
		actor.WithLoggerFactory(func(*actor.ActorSystem) *slog.Logger { return DiscardLogger() }),
	))
	t.Cleanup(sys.Shutdown) // after the runtime's Close
	s := &scenario{t: t, rt: newTestRuntime(t, WithActorSystem(sys)), quit: make(chan struct{}), kernels: map[string]*scenKernel{}}
	// Registered after newTestRuntime's cleanup, so it runs before the
	// runtime closes: blocking handlers give up, and Close can drain.
	t.Cleanup(func() {
		close(s.quit)
		if len(s.pending) > 0 {
			t.Errorf("%d outcomes never awaited", len(s.pending))
		}
	})
	return s
}

func (s *scenario) run(t *testing.T, d *datadriven.TestData) string {
	var out strings.Builder
	p := func(format string, args ...any) { fmt.Fprintf(&out, format+"\n", args...) }
	ctx, cancel := context.WithTimeout(context.Background(), s.wait())
	defer cancel()
	if d.HasArg("timeout") {
		var cancel2 context.CancelFunc
		ctx, cancel2 = context.WithTimeout(ctx, s.duration(t, d, "timeout"))
		defer cancel2()
	}
	switch d.Cmd {
	case "kernel":
		s.declare(t, d, p)
	case "launch":
		k := s.kernel(t, d)
		p("%s", s.lifecycleResult(k, s.rt.Launch(ctx, k.id)))
	case "activate", "deactivate", "reactivate":
		k := s.kernel(t, d)
		var err error
		switch d.Cmd {
		case "activate":
			err = s.rt.Activate(ctx, k.id)
		case "deactivate":
			err = s.rt.Deactivate(ctx, k.id)
		default:
			err = s.rt.Reactivate(ctx, k.id)
		}
		p("%s", s.lifecycleResult(k, err))
	case "terminate":
		k := s.kernel(t, d)
		if d.HasArg("async") {
			// Terminate runs on a goroutine (a drain waiting for a blocking
			// handler); its result is printed by await. The context lives
			// until the terminate returns.
			tctx, tcancel := context.WithTimeout(context.Background(), s.wait())
			if d.HasArg("timeout") {
				tcancel()
				tctx, tcancel = context.WithTimeout(context.Background(), s.duration(t, d, "timeout"))
			}
			po := s.expect("terminate " + k.id)
			res := make(chan error, 1)
			go func() {
				defer tcancel()
				res <- s.rt.Terminate(tctx, k.id)
			}()
			// Return once the kernel actor has raised the control block's
			// terminate flag (what the loop reads between messages) or the
			// call has returned.
			for {
				select {
				case err := <-res:
					po.put(s.lifecycleResult(k, err))
					p("terminate returned at once")
					return out.String()
				default:
				}
				if k.h.k.cb.Terminate.Load() != 0 {
					go func() { po.put(s.lifecycleResult(k, <-res)) }()
					p("terminating")
					return out.String()
				}
				runtime.Gosched()
			}
		}
		p("%s", s.lifecycleResult(k, s.rt.Terminate(ctx, k.id)))
	case "send":
		s.send(t, d, ctx, p)
	case "request":
		k := s.kernel(t, d)
		for _, v := range s.values(t, d) {
			// The request's context bounds its admission and its handler;
			// it lives until await has its outcome.
			rctx, rcancel := context.WithTimeout(context.Background(), s.wait())
			if d.HasArg("timeout") {
				rcancel()
				rctx, rcancel = context.WithTimeout(context.Background(), s.duration(t, d, "timeout"))
			}
			po := s.expect(fmt.Sprintf("request v=%d", v))
			po.cancel = rcancel
			err := k.h.RequestAsync(rctx, num{V: v}, func(r num, err error) {
				po.ch <- func() string {
					k.outcome(v)
					return outcomeString(r, err)
				}
			})
			if err != nil {
				rcancel()
				s.pending = s.pending[:len(s.pending)-1]
				p("v=%d %s", v, errKind(err))
				continue
			}
			k.admitted = append(k.admitted, v)
			p("v=%d admitted", v)
		}
	case "post":
		k := s.kernel(t, d)
		pid := k.h.PID()
		root := s.rt.ActorSystem().Root
		for _, v := range s.values(t, d) {
			if !d.HasArg("request") {
				root.Send(pid, num{V: v})
				p("v=%d posted", v)
				continue
			}
			f := root.RequestFuture(pid, num{V: v}, s.wait())
			po := s.expect(fmt.Sprintf("post v=%d", v))
			go func() { po.put(futureString(f)) }()
			p("v=%d posted", v)
		}
	case "command":
		k := s.kernel(t, d)
		ev := s.event(t, d)
		f := s.rt.ActorSystem().Root.RequestFuture(k.h.PID(), &lifecycle.Command{Event: ev}, s.wait())
		p("%s", futureString(f))
	case "wait-started":
		k := s.kernel(t, d)
		for range s.intArg(t, d, "n", 1) {
			v, ok := k.nextStart(ctx)
			if !ok {
				p("timeout: no message started")
				break
			}
			k.begun = append(k.begun, v)
			p("v=%d in handler", v)
		}
	case "release":
		k := s.kernel(t, d)
		for range s.intArg(t, d, "n", 1) {
			select {
			case k.release <- struct{}{}:
			case <-ctx.Done():
				p("timeout: no handler took the release")
				return out.String()
			}
			v := <-k.took
			// Handlers run one at a time and report their start before they
			// take a release: the started messages up to v have left the
			// handler (released, or by their context).
			if i := slices.Index(k.begun, v); i >= 0 {
				k.begun = k.begun[i+1:]
			} else {
				k.begun = nil
				for w := <-k.started; w != v; w = <-k.started {
				}
			}
			p("v=%d released", v)
		}
	case "receive":
		s.receive(t, d, ctx, p)
	case "await":
		for _, po := range s.pending {
			select {
			case r := <-po.ch:
				p("%s -> %s", po.label, r())
			case <-time.After(s.wait()):
				p("%s -> timeout: no outcome", po.label)
			}
			if po.cancel != nil {
				po.cancel()
			}
		}
		s.pending = nil
	case "status":
		k := s.kernel(t, d)
		st, err := s.rt.Status(k.id)
		if err != nil {
			p("%s", errKind(err))
			break
		}
		p("state=%s processed=%d errors=%d dropped=%d depth=%d restarts=%d",
			st.State, st.Processed, st.Errors, st.Dropped, st.Depth, st.Restarts)
	case "check":
		k := s.kernel(t, d)
		var missing, dup []int
		for _, v := range k.admitted {
			switch n := k.outcomes[v]; {
			case n == 0:
				missing = append(missing, v)
			case n > 1:
				dup = append(dup, v)
			}
		}
		p("admitted=%d outcomes=%d missing=%v duplicated=%v", len(k.admitted), k.total(), missing, dup)
	case "close":
		cctx, ccancel := context.WithTimeout(context.Background(), s.wait())
		defer ccancel()
		close(s.quit)
		s.quit = make(chan struct{}) // the cleanup closes this one
		err := s.rt.Close(cctx)
		s.closed = true
		if err != nil {
			p("%s", errKind(err))
		} else {
			p("closed")
		}
	default:
		d.Fatalf(t, "unknown command %q", d.Cmd)
	}
	return out.String()
}

// declare registers a kernel and, unless launch=false, launches it.
func (s *scenario) declare(t *testing.T, d *datadriven.TestData, p func(string, ...any)) {
	id := s.strArg(t, d, "id", "")
	k := &scenKernel{id: id, started: make(chan int, 1024), release: make(chan struct{}), took: make(chan int, 1), values: map[uint64]int{}, outcomes: map[int]int{}}
	opts := []KernelOption{
		WithCapacity(s.intArg(t, d, "capacity", 2)),
		WithOverflow(s.intArg(t, d, "overflow", 1)),
		WithOutputCapacity(s.intArg(t, d, "out", 64)),
	}
	switch pol := s.strArg(t, d, "policy", "block"); pol {
	case "block":
		opts = append(opts, WithBackpressure(Block))
	case "reject":
		opts = append(opts, WithBackpressure(Reject))
	case "drop-oldest":
		opts = append(opts, WithBackpressure(DropOldest))
	default:
		d.Fatalf(t, "unknown policy %q", pol)
	}
	switch dr := s.strArg(t, d, "drain", "process"); dr {
	case "process":
		opts = append(opts, WithDrain(DrainProcess))
	case "reject":
		opts = append(opts, WithDrain(DrainReject))
	default:
		d.Fatalf(t, "unknown drain %q", dr)
	}
	mode := s.strArg(t, d, "handler", "echo")
	if mode != "echo" && mode != "block" {
		d.Fatalf(t, "unknown handler %q", mode)
	}
	var failOn, panicOn []int
	if d.HasArg("fail-on") {
		failOn = s.values(t, d, "fail-on")
	}
	if d.HasArg("panic-on") {
		panicOn = s.values(t, d, "panic-on")
	}
	quit := s.quit
	h := func(ctx context.Context, r num) (num, error) {
		if mode == "block" {
			k.started <- r.V
			select {
			case <-k.release:
				k.took <- r.V
			case <-ctx.Done():
				return num{}, ctx.Err()
			case <-quit:
				return num{}, errors.New("scenario ended")
			}
		}
		switch {
		case slices.Contains(panicOn, r.V):
			panic(fmt.Sprintf("panic-on=%d", r.V))
		case slices.Contains(failOn, r.V):
			return num{}, fmt.Errorf("fail-on=%d", r.V)
		}
		return r, nil
	}
	def := NewStatelessKernel(id, h, opts...)
	if s.strArg(t, d, "launch", "true") == "false" {
		if err := s.rt.Register(def); err != nil {
			p("%s", errKind(err))
			return
		}
		hd, err := Lookup[num, num](s.rt, id)
		if err != nil {
			d.Fatalf(t, "Handle: %v", err)
		}
		k.h = hd
		s.kernels[id] = k
		p("registered: %s", hd.State())
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), s.wait())
	defer cancel()
	hd, err := Launch(ctx, s.rt, def)
	if err != nil {
		p("%s", errKind(err))
		return
	}
	k.h = hd
	s.kernels[id] = k
	p("launched: %s", hd.State())
}

// send admits each value with Kernel.Send. With async (one value), the send
// runs on a goroutine and the command returns once the sender blocks on a
// full kernel or has its result; the result is printed by await.
func (s *scenario) send(t *testing.T, d *datadriven.TestData, ctx context.Context, p func(string, ...any)) {
	k := s.kernel(t, d)
	vals := s.values(t, d)
	if d.HasArg("async") {
		if len(vals) != 1 {
			d.Fatalf(t, "send async takes one value")
		}
		v := vals[0]
		po := s.expect(fmt.Sprintf("send v=%d", v))
		type sent struct {
			id  uint64
			err error
		}
		res := make(chan sent, 1)
		go func() {
			id, err := k.h.Send(context.Background(), num{V: v})
			res <- sent{id, err}
		}()
		result := func(r sent) func() string {
			return func() string { // on the test goroutine, at await
				if r.err != nil {
					return errKind(r.err)
				}
				k.admitted = append(k.admitted, v)
				return "ok"
			}
		}
		// The sender announces its wait (blocked) just before it waits.
		for {
			select {
			case r := <-res:
				po.ch <- result(r)
				p("v=%d returned at once", v)
				return
			default:
			}
			if k.h.k.blocked.Load() {
				go func() { po.ch <- result(<-res) }()
				p("v=%d blocked", v)
				return
			}
			runtime.Gosched()
		}
	}
	for _, v := range vals {
		id, err := k.h.Send(ctx, num{V: v})
		if err != nil {
			p("v=%d %s", v, errKind(err))
			continue
		}
		k.noteSent(id, v)
		p("v=%d ok", v)
	}
}

func (s *scenario) receive(t *testing.T, d *datadriven.TestData, ctx context.Context, p func(string, ...any)) {
	k := s.kernel(t, d)
	n, all := 0, false
	if s.strArg(t, d, "n", "1") == "all" {
		all = true // until the stream ends (a terminated kernel)
	} else {
		n = s.intArg(t, d, "n", 1)
	}
	for i := 0; all || i < n; i++ {
		r, id, err := k.h.k.receive(ctx)
		if id == 0 && err != nil {
			p("%s", errKind(err)) // no outcome: the stream ended or the wait did
			break
		}
		// A message sent with async may be handled before its sender learns
		// its id, and a PID post without a sender has an id unknown here: a
		// reply still names its message (the handler echoes it).
		v, ok := k.values[id]
		if !ok && err == nil {
			v, ok = r.V, true
		}
		label := "?"
		if ok {
			label = fmt.Sprintf("v=%d", v)
			k.outcome(v)
		}
		p("%s -> %s", label, outcomeString(r, err))
	}
}

func (k *scenKernel) noteSent(id uint64, v int) {
	k.values[id] = v
	k.admitted = append(k.admitted, v)
}

// outcome counts one outcome of the admitted value v. Values are unique per
// kernel in the scenarios, so the count is per message.
func (k *scenKernel) outcome(v int) { k.outcomes[v]++ }

func (k *scenKernel) total() int {
	n := 0
	for _, c := range k.outcomes {
		n += c
	}
	return n
}

func (k *scenKernel) nextStart(ctx context.Context) (int, bool) {
	select {
	case v := <-k.started:
		return v, true
	case <-ctx.Done():
		return 0, false
	}
}

func (s *scenario) expect(label string) *pendingOutcome {
	po := &pendingOutcome{label: label, ch: make(chan func() string, 1)}
	s.pending = append(s.pending, po)
	return po
}

// lifecycleResult prints a lifecycle call's result. Not the state after it:
// an active kernel's loop may fault at any moment (status shows the state
// once the scenario has synchronised on an outcome).
func (s *scenario) lifecycleResult(_ *scenKernel, err error) string {
	if err != nil {
		return errKind(err)
	}
	return "ok"
}

func outcomeString(r num, err error) string {
	if err != nil {
		return errKind(err)
	}
	return strconv.Itoa(r.V)
}

// futureString prints a Proto.Actor future's result: a reply, an error sent
// as the reply, or a lifecycle.Reply.
func futureString(f *actor.Future) string {
	res, err := f.Result()
	if err != nil {
		return "future: " + errKind(err)
	}
	switch r := res.(type) {
	case num:
		return strconv.Itoa(r.V)
	case *lifecycle.Reply:
		if r.Err != nil {
			return fmt.Sprintf("reply %s -> %s: %s", r.From, r.To, errKind(r.Err))
		}
		return fmt.Sprintf("reply %s -> %s", r.From, r.To)
	case error:
		return errKind(r)
	}
	return fmt.Sprintf("unexpected reply %T", res)
}

// errKinds are the sentinels an outcome is printed by, in the order printed.
var errKinds = []struct {
	name string
	err  error
}{
	{"ErrRingFull", ErrRingFull},
	{"ErrDropped", ErrDropped},
	{"ErrTerminated", ErrTerminated},
	{"ErrInternalEvent", ErrInternalEvent},
	{"lifecycle.ErrTransition", lifecycle.ErrTransition},
	{"ErrInvalidKernel", ErrInvalidKernel},
	{"ErrNotLaunched", ErrNotLaunched},
	{"ErrDuplicateKernel", ErrDuplicateKernel},
	{"ErrUnknownKernel", ErrUnknownKernel},
	{"ErrWrongMessageType", ErrWrongMessageType},
	{"ErrRuntimeClosed", ErrRuntimeClosed},
	{"ErrNilMessage", ErrNilMessage},
	{"gpu.ErrExecution", gpu.ErrExecution},
	{"context.DeadlineExceeded", context.DeadlineExceeded},
	{"context.Canceled", context.Canceled},
	{"actor.ErrDeadLetter", actor.ErrDeadLetter},
	{"actor.ErrTimeout", actor.ErrTimeout},
}

// errKind names err by every sentinel it matches (with the refused
// transition, or whether a handler panicked), never by its message, which
// carries message ids.
func errKind(err error) string {
	var kinds []string
	for _, k := range errKinds {
		if !errors.Is(err, k.err) {
			continue
		}
		name := k.name
		var ite lifecycle.ErrInvalidTransition
		var ee *gpu.ExecutionError
		switch {
		case k.err == lifecycle.ErrTransition && errors.As(err, &ite):
			name += fmt.Sprintf("(%s from %s)", ite.Event, ite.From)
		case k.err == gpu.ErrExecution && errors.As(err, &ee):
			if ee.Panic != nil {
				name += "(panic)"
			} else {
				name += "(error)"
			}
		}
		kinds = append(kinds, name)
	}
	if len(kinds) == 0 {
		return "unclassified error: " + err.Error()
	}
	return "error: " + strings.Join(kinds, ", ")
}

// Arguments.

func (s *scenario) kernel(t *testing.T, d *datadriven.TestData) *scenKernel {
	id := s.strArg(t, d, "id", "")
	k, ok := s.kernels[id]
	if !ok {
		d.Fatalf(t, "no kernel %q declared", id)
	}
	return k
}

func (s *scenario) strArg(t *testing.T, d *datadriven.TestData, key, def string) string {
	if !d.HasArg(key) {
		if def == "" {
			d.Fatalf(t, "missing argument %s", key)
		}
		return def
	}
	var v string
	d.ScanArgs(t, key, &v)
	return v
}

func (s *scenario) intArg(t *testing.T, d *datadriven.TestData, key string, def int) int {
	if !d.HasArg(key) {
		return def
	}
	var v int
	d.ScanArgs(t, key, &v)
	return v
}

func (s *scenario) duration(t *testing.T, d *datadriven.TestData, key string) time.Duration {
	v, err := time.ParseDuration(s.strArg(t, d, key, ""))
	if err != nil {
		d.Fatalf(t, "%s: %v", key, err)
	}
	return v
}

// values reads key=3, key=1..5 or key=(1, 4, 7); key is "v" unless given.
func (s *scenario) values(t *testing.T, d *datadriven.TestData, key ...string) []int {
	want := "v"
	if len(key) > 0 {
		want = key[0]
	}
	for _, a := range d.CmdArgs {
		if a.Key != want {
			continue
		}
		var out []int
		for _, val := range a.Vals {
			lo, hi, isRange := strings.Cut(val, "..")
			from, err1 := strconv.Atoi(lo)
			to := from
			var err2 error
			if isRange {
				to, err2 = strconv.Atoi(hi)
			}
			if err1 != nil || err2 != nil || to < from {
				d.Fatalf(t, "bad value %q", val)
			}
			for v := from; v <= to; v++ {
				out = append(out, v)
			}
		}
		return out
	}
	d.Fatalf(t, "missing argument %s", want)
	return nil
}

func (s *scenario) event(t *testing.T, d *datadriven.TestData) lifecycle.Event {
	name := s.strArg(t, d, "event", "")
	i := slices.IndexFunc(lifecycle.Events(), func(e lifecycle.Event) bool { return e.String() == name })
	if i < 0 {
		d.Fatalf(t, "unknown event %q", name)
	}
	return lifecycle.Events()[i]
}
