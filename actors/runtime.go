package actors

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sort"
	"sync"
	"sync/atomic"

	"github.com/asynkron/protoactor-go/actor"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"

	"github.com/ringactor/ringactor/compute"
	"github.com/ringactor/ringactor/lifecycle"
	"github.com/ringactor/ringactor/supervision"
	"github.com/ringactor/ringactor/telemetry"
)

// Runtime is the embedding API of ringactor: it owns (or attaches to) a
// Proto.Actor system, runs the orchestrator root actor, and launches, feeds
// and controls ring kernels by id.
type Runtime struct {
	system    *actor.ActorSystem
	ownSystem bool
	orch      *orchestratorRef
	logger    *slog.Logger
	telemetry *telemetry.Instruments
	devices   *deviceGauges // NVML gauges; nil without telemetry or device

	mu      sync.Mutex // registration
	kernels sync.Map   // id → anyKernel: lock-free lookups on the hot path
	closed  atomic.Bool

	tracer  trace.Tracer
	tracing bool // telemetry on
	spans   bool // telemetry on with a tracer provider given: message spans (tracing.go)

	// compute is the compute orchestrator (Execute and friends, forwarded
	// in orchestrator_forward.go); device ring kernels reach its backends
	// through backends only.
	compute  *compute.Orchestrator
	backends compute.Backends
	devs     deviceSet // the CUDA devices of device ring kernels (device_choice.go)
}

// Option configures a Runtime.
type Option func(*runtimeConfig)

type runtimeConfig struct {
	system     *actor.ActorSystem
	logger     *slog.Logger
	strategy   actor.SupervisorStrategy
	name       string
	telemetry  bool
	meterProv  metric.MeterProvider
	tracerProv trace.TracerProvider
	producer   *telemetry.Producer
	// deviceMonitor opens the device monitor (WithDeviceMonitor; default
	// NVML unless set)
	deviceMonitor    func() (DeviceMonitor, error)
	deviceMonitorSet bool
	compute          []compute.Option // the orchestrator's options (orchestrator_forward.go)
	logLevel         *slog.Level
}

// WithActorSystem attaches the runtime to an existing actor system instead of
// creating one; Close then leaves the system running.
func WithActorSystem(s *actor.ActorSystem) Option { return func(c *runtimeConfig) { c.system = s } }

// WithLogger sets the logger (default slog.Default()). A system the runtime
// creates logs through it too.
func WithLogger(l *slog.Logger) Option { return func(c *runtimeConfig) { c.logger = l } }

// WithLogLevel sets the lowest level the runtime logs at (default: the
// logger's own, slog.Default's Info).
func WithLogLevel(l slog.Level) Option { return func(c *runtimeConfig) { c.logLevel = &l } }

// WithSupervisor sets the strategy the orchestrator applies to failing kernel
// actors (default supervision.NewStrategy(): exponential backoff).
func WithSupervisor(s actor.SupervisorStrategy) Option {
	return func(c *runtimeConfig) { c.strategy = s }
}

// WithName names the orchestrator actor (default "ringactor"); several
// runtimes may share one actor system under different names.
func WithName(name string) Option { return func(c *runtimeConfig) { c.name = name } }

// WithTelemetry turns OpenTelemetry instruments on or off (default on, with
// the global providers).
func WithTelemetry(on bool) Option { return func(c *runtimeConfig) { c.telemetry = on } }

// WithMeterProvider sets the OpenTelemetry meter provider.
func WithMeterProvider(p metric.MeterProvider) Option {
	return func(c *runtimeConfig) { c.meterProv = p }
}

// WithTracerProvider sets the OpenTelemetry tracer provider.
func WithTracerProvider(p trace.TracerProvider) Option {
	return func(c *runtimeConfig) { c.tracerProv = p }
}

// WithTelemetryProducer makes the runtime's kernels' latency histograms
// (message latency, queueing delay, handler duration) exported through p, an
// OpenTelemetry sdk/metric Producer attached to the meter provider's readers
// (telemetry.Setup does both: pass its Producer).
func WithTelemetryProducer(p *telemetry.Producer) Option {
	return func(c *runtimeConfig) { c.producer = p }
}

// WithProviders uses the providers telemetry.Setup built: their meter and
// tracer providers and their histogram Producer.
func WithProviders(p *telemetry.Providers) Option {
	return func(c *runtimeConfig) {
		if p != nil {
			c.meterProv, c.tracerProv, c.producer = p.MeterProvider, p.TracerProvider, p.Producer
		}
	}
}

// NewRuntime starts a runtime: its actor system (unless one is given) and
// its orchestrator.
func NewRuntime(opts ...Option) (*Runtime, error) {
	cfg := runtimeConfig{name: "ringactor", telemetry: true}
	for _, o := range opts {
		o(&cfg)
	}
	if cfg.logger == nil {
		cfg.logger = slog.Default()
	}
	if cfg.logLevel != nil {
		cfg.logger = slog.New(levelFloor{h: cfg.logger.Handler(), min: *cfg.logLevel})
	}
	if cfg.strategy == nil {
		cfg.strategy = supervision.NewStrategy(supervision.WithLogger(cfg.logger))
	} else if s, ok := cfg.strategy.(*supervision.Strategy); ok && s.Logger == nil {
		// A strategy without a logger logs through the runtime's, even
		// when the runtime is attached to a system with another logger.
		c := *s
		c.Logger = cfg.logger
		cfg.strategy = &c
	}
	rt := &Runtime{system: cfg.system, logger: cfg.logger}
	if rt.system == nil {
		logger := cfg.logger
		rt.system = actor.NewActorSystem(actor.WithLoggerFactory(func(*actor.ActorSystem) *slog.Logger { return quieter(logger) }))
		rt.ownSystem = true
	}
	if cfg.telemetry {
		var topts []telemetry.Option
		if cfg.meterProv != nil {
			topts = append(topts, telemetry.WithMeterProvider(cfg.meterProv))
		}
		if cfg.tracerProv != nil {
			topts = append(topts, telemetry.WithTracerProvider(cfg.tracerProv))
		}
		topts = append(topts, telemetry.WithProducer(cfg.producer))
		ins, err := telemetry.New(rt.allStats, topts...)
		if err != nil {
			rt.shutdownSystem()
			return nil, fmt.Errorf("ringactor: telemetry: %w", err)
		}
		rt.telemetry = ins
		rt.tracing = true
		rt.spans = telemetry.MakesSpans(cfg.tracerProv)
		if !cfg.deviceMonitorSet {
			cfg.deviceMonitor = openNVML
		}
		rt.devices = rt.startDeviceGauges(cfg.deviceMonitor, ins.Meter())
	} else {
		rt.telemetry = telemetry.Disabled()
	}
	rt.tracer = rt.telemetry.Tracer()
	copts := []compute.Option{compute.WithLogger(rt.logger)}
	if cfg.telemetry {
		copts = append(copts, compute.WithTelemetry(rt.telemetry, cfg.tracerProv))
	}
	orc, err := compute.New(append(copts, cfg.compute...)...)
	if err != nil {
		_ = rt.devices.close()
		_ = rt.telemetry.Close()
		rt.shutdownSystem()
		return nil, err
	}
	rt.compute, rt.backends = orc, orc
	props := actor.PropsFromProducer(func() actor.Actor { return &Orchestrator{rt: rt} }, actor.WithSupervisor(cfg.strategy))
	pid, err := rt.system.Root.SpawnNamed(props, cfg.name)
	if err != nil {
		_ = rt.devices.close()
		_ = rt.telemetry.Close()
		_ = rt.compute.Close()
		rt.shutdownSystem()
		return nil, fmt.Errorf("ringactor: spawning orchestrator: %w", err)
	}
	rt.orch = &orchestratorRef{rt: rt, pid: pid}
	return rt, nil
}

// quieter drops Proto.Actor's informational chatter (every spawn and
// restart) to debug level unless the user's logger wants debug.
func quieter(l *slog.Logger) *slog.Logger {
	if l.Enabled(context.Background(), slog.LevelDebug) {
		return l
	}
	return slog.New(levelFloor{h: l.Handler(), min: slog.LevelWarn})
}

// levelFloor passes records at or above min.
type levelFloor struct {
	h   slog.Handler
	min slog.Level
}

func (f levelFloor) Enabled(ctx context.Context, l slog.Level) bool {
	return l >= f.min && f.h.Enabled(ctx, l)
}
func (f levelFloor) Handle(ctx context.Context, r slog.Record) error { return f.h.Handle(ctx, r) }
func (f levelFloor) WithAttrs(a []slog.Attr) slog.Handler {
	return levelFloor{h: f.h.WithAttrs(a), min: f.min}
}
func (f levelFloor) WithGroup(n string) slog.Handler {
	return levelFloor{h: f.h.WithGroup(n), min: f.min}
}

// DiscardLogger is a logger that writes nothing, for tests and benchmarks.
func DiscardLogger() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

// ActorSystem returns the runtime's actor system.
func (rt *Runtime) ActorSystem() *actor.ActorSystem { return rt.system }

// Orchestrator returns the PID of the runtime's root actor.
func (rt *Runtime) Orchestrator() *actor.PID { return rt.orch.pid }

// Telemetry returns the runtime's OpenTelemetry instruments.
func (rt *Runtime) Telemetry() *telemetry.Instruments { return rt.telemetry }

// Definition is a kernel declaration of any message and reply types; it is
// implemented by *KernelDef.
type Definition interface {
	ID() string
	register(rt *Runtime) (anyKernel, error)
}

func (d *KernelDef[Req, Resp]) register(rt *Runtime) (anyKernel, error) {
	if err := d.validate(); err != nil {
		return nil, err
	}
	if d.prog != nil {
		if err := d.prog.prepare(rt); err != nil {
			return nil, kernelErr(d.id, err)
		}
	}
	return newKernel(rt, d), nil
}

// Register declares a kernel in the runtime (state Created) without
// launching it. An id may be registered again once its kernel is terminated.
func (rt *Runtime) Register(def Definition) error {
	_, err := rt.register(def)
	return err
}

func (rt *Runtime) register(def Definition) (anyKernel, error) {
	if rt.closed.Load() {
		return nil, ErrRuntimeClosed
	}
	k, err := def.register(rt)
	if err != nil {
		return nil, err
	}
	rt.mu.Lock()
	defer rt.mu.Unlock()
	if old, ok := rt.kernels.Load(def.ID()); ok && old.(anyKernel).state() != lifecycle.Terminated {
		return nil, kernelErr(def.ID(), ErrDuplicateKernel)
	}
	rt.kernels.Store(def.ID(), k)
	return k, nil
}

// Launch allocates a registered kernel's rings and starts its actor and loop
// with the gate closed: messages sent now queue until Activate.
func (rt *Runtime) Launch(ctx context.Context, id string) error {
	k, err := rt.lookup(id)
	if err != nil {
		return err
	}
	return k.launch(ctx)
}

// lookup finds a kernel by id.
func (rt *Runtime) lookup(id string) (anyKernel, error) {
	if rt.closed.Load() {
		return nil, ErrRuntimeClosed
	}
	k, ok := rt.kernels.Load(id)
	if !ok {
		return nil, kernelErr(id, ErrUnknownKernel)
	}
	return k.(anyKernel), nil
}

// Activate opens a launched kernel's gate: its loop starts consuming.
func (rt *Runtime) Activate(ctx context.Context, id string) error {
	return rt.command(ctx, id, lifecycle.Activate)
}

// Deactivate closes a kernel's gate: messages queue (with backpressure) and
// nothing is lost.
func (rt *Runtime) Deactivate(ctx context.Context, id string) error {
	return rt.command(ctx, id, lifecycle.Deactivate)
}

// Reactivate opens a deactivated kernel's gate again.
func (rt *Runtime) Reactivate(ctx context.Context, id string) error {
	return rt.command(ctx, id, lifecycle.Reactivate)
}

// Terminate drains a kernel according to its drain policy, stops its loop
// and its actor, and releases it. If ctx ends first, the kernel gives up
// waiting for readers of its receive stream (counting what it could not
// deliver as dropped) and Terminate returns ctx's error; the termination
// goes on. A Terminate while one is under way (or after it) waits for the
// same end and returns nil once it has come (or ctx's error).
func (rt *Runtime) Terminate(ctx context.Context, id string) error {
	k, err := rt.lookup(id)
	if err != nil {
		return err
	}
	if k.state() == lifecycle.Created { // never launched: no actor to stop
		rt.mu.Lock()
		rt.kernels.Delete(id)
		rt.mu.Unlock()
		return nil
	}
	if err := ctx.Err(); err != nil { // nothing asked yet: nothing changes
		return kernelErr(id, err)
	}
	err = rt.command(ctx, id, lifecycle.Terminate)
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		k.abort() // the terminate goes on, without waiting for readers
	}
	return err
}

// command sends a lifecycle event to a kernel actor and waits for the answer.
func (rt *Runtime) command(ctx context.Context, id string, ev lifecycle.Event) error {
	k, err := rt.lookup(id)
	if err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return kernelErr(id, err)
	}
	pid := k.pid()
	if pid == nil {
		return kernelErr(id, ErrNotLaunched)
	}
	done := make(chan lifecycle.Reply, 1)
	rt.system.Root.Send(pid, &lifecycleRequest{event: ev, done: done})
	select {
	case r := <-done:
		return r.Err
	case <-ctx.Done():
		return kernelErr(id, ctx.Err())
	case <-k.done():
		select {
		case r := <-done:
			// The kernel answered, then ended before this select ran (an
			// Activate whose kernel faulted until its supervisor gave
			// up): the answer is the outcome, not the end.
			return r.Err
		default:
		}
		if ev == lifecycle.Terminate {
			return nil
		}
		return kernelErr(id, ErrTerminated)
	}
}

// Status is a kernel's lifecycle state and counters.
type Status struct {
	State lifecycle.State
	telemetry.KernelStats
}

// Status returns a kernel's state and counters.
func (rt *Runtime) Status(id string) (Status, error) {
	k, err := rt.lookup(id)
	if err != nil {
		return Status{}, err
	}
	return Status{State: k.state(), KernelStats: k.stats()}, nil
}

// KernelTelemetry returns a kernel's counters: processed, dropped, errors,
// restarts, depth, latency min/avg/max.
func (rt *Runtime) KernelTelemetry(id string) (telemetry.KernelStats, error) {
	k, err := rt.lookup(id)
	if err != nil {
		return telemetry.KernelStats{}, err
	}
	return k.stats(), nil
}

// Kernels returns the ids of every registered kernel, sorted.
func (rt *Runtime) Kernels() []string {
	var ids []string
	rt.kernels.Range(func(id, _ any) bool {
		ids = append(ids, id.(string))
		return true
	})
	sort.Strings(ids)
	return ids
}

// allStats is the telemetry source: every launched kernel's counters.
func (rt *Runtime) allStats() []telemetry.KernelStats {
	var out []telemetry.KernelStats
	rt.kernels.Range(func(_, v any) bool {
		if k := v.(anyKernel); k.state() != lifecycle.Created {
			out = append(out, k.stats())
		}
		return true
	})
	return out
}

// Close terminates every kernel (each drains per its policy), stops the
// orchestrator and, if the runtime created it, the actor system. If ctx ends
// first, the kernels still running are stopped, rejecting what they hold.
func (rt *Runtime) Close(ctx context.Context) error {
	if rt.closed.Load() {
		return nil
	}
	var errs []error
	var wg sync.WaitGroup
	var emu sync.Mutex
	for _, id := range rt.Kernels() {
		k, err := rt.lookup(id)
		if err != nil || k.state() == lifecycle.Terminated || k.state() == lifecycle.Created {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			// A kernel its owner terminated meanwhile (a cluster activation
			// passivating as its member closes) is closed all the same.
			if err := rt.Terminate(ctx, id); err != nil && !errors.Is(err, ErrTerminated) && k.state() != lifecycle.Terminated {
				emu.Lock()
				errs = append(errs, err)
				emu.Unlock()
			}
		}()
	}
	wg.Wait()
	rt.closed.Store(true)
	// Wait for the terminated kernel actors to be gone (within ctx), so
	// that stopping the orchestrator does not stop them a second time.
	gone := make(chan struct{})
	rt.system.Root.Send(rt.orch.pid, &awaitChildren{done: gone})
	select {
	case <-gone:
	case <-ctx.Done():
	}
	// Stopping the orchestrator stops any kernel actor still alive; each
	// rejects what it holds (onStopping).
	if err := rt.system.Root.StopFuture(rt.orch.pid).Wait(); err != nil {
		errs = append(errs, fmt.Errorf("stopping orchestrator: %w", err))
	}
	errs = append(errs, rt.devices.close(), rt.telemetry.Close(), rt.compute.Close(), rt.closeDevices())
	rt.shutdownSystem()
	return errors.Join(errs...)
}

func (rt *Runtime) shutdownSystem() {
	if rt.ownSystem {
		rt.system.Shutdown()
	}
}
