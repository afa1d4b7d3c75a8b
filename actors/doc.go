// Package actors runs ring kernels as supervised Proto.Actor actors and is
// the compute orchestrator's embedding API.
//
// A Runtime owns a Proto.Actor actor system (its own, or the user's through
// WithActorSystem), the orchestrator root actor that supervises every kernel
// actor, the compute backends (CPU always; CUDA where a device is usable) and
// the buffer pool.
//
// Ring kernels: declare one with NewStatelessKernel (a handler function),
// NewKernel (a factory that builds fresh state at every start and restart) or
// NewDeviceKernel (a built-in gpu/ringmsg handler that runs as a persistent
// CUDA kernel where a device allows, and on the CPU otherwise); then Launch it
// (rings allocated, loop started, gate closed) and Activate it. Kernel[Req,
// Resp] is the typed handle: Send and Request take a context and wait under it
// when the ring is full (the Block policy), Receive reads the kernel's output
// stream. Deactivate closes the gate (messages queue, nothing is lost),
// Reactivate opens it, Terminate drains or rejects what is queued (per
// WithDrain) and releases the kernel. Every message sent gets exactly one
// outcome: its reply or a typed error (ExecutionError for a handler that
// failed or panicked, ErrTerminated, ErrRingFull, ErrDropped, the context's
// error). A panicking handler restarts its kernel with backoff; the messages
// behind it are kept. The kernel's PID accepts the same messages from any
// Proto.Actor actor (Send or RequestFuture) and lifecycle.Command values.
//
// Compute: Runtime.Execute, ExecuteBatch, Map, Reduce, Submit and NewPipeline
// run named kernels (gpu.KernelSpec) on gpu.UnifiedBuffer arrays, choosing a
// backend by workload, with retries, CPU fallback and batch splitting on the
// errors that allow them.
//
// docs/DESIGN.md in the repository describes the ring protocol, the lifecycle
// and the device path.
package actors
