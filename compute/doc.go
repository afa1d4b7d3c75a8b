// Package compute is ringactor's compute orchestrator: one-shot compute
// kernels run by name on buffers (Execute, ExecuteBatch, Map, Reduce,
// Submit, pipelines), on the backend chosen for the call (the CPU, a CUDA
// device, a backend of the caller's), with dtypes and shapes checked
// before anything runs, outputs from a buffer pool, recovery from device
// failures (retry, CPU fallback, batch split), optional cross-backend
// validation, per-kernel profiles and OpenTelemetry telemetry.
//
// An Orchestrator stands alone (New); actors.Runtime holds one and forwards
// its compute methods to it, so a program that runs ring kernels calls
// rt.Execute as before. Package compute sits below actors: it imports
// neither actors nor cluster.
package compute
