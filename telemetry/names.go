package telemetry

// ScopeName is the instrumentation scope of ringactor's meter and tracer.
const ScopeName = "ringactor"

// Instrument names.
const (
	// KernelExecutions is an Int64Counter of one-shot kernel executions run
	// by the orchestrator; attributes AttrKernel, AttrBackend.
	KernelExecutions = "ringactor.kernel.executions"
	// KernelDuration is a Float64Histogram of one execution's duration in
	// seconds; attributes AttrKernel, AttrBackend.
	KernelDuration = "ringactor.kernel.duration"
	// MemoryAllocated is an Int64ObservableGauge of the bytes held by a ring
	// kernel (rings, control blocks); attribute AttrKernel.
	MemoryAllocated = "ringactor.memory.allocated"
	// MemoryTransferred is an Int64Counter of bytes moved between host and
	// device; attributes AttrKernel, AttrBackend, AttrDirection.
	MemoryTransferred = "ringactor.memory.transferred"
	// DeviceKernels is an Int64ObservableGauge of the ring kernels running
	// on each device (a kernel's Backend other than "cpu"); attribute
	// AttrBackend, the device ("cuda:0", "cuda:sim1").
	DeviceKernels = "ringactor.device.kernels"
	// RingDepth is an Int64ObservableGauge of the messages waiting in a
	// kernel's input ring, overflow included; attribute AttrKernel.
	RingDepth = "ringactor.ring.depth"
	// MessagesProcessed is an Int64ObservableCounter of the messages a kernel
	// has processed; attribute AttrKernel.
	MessagesProcessed = "ringactor.messages.processed"
	// MessagesDropped is an Int64ObservableCounter of the messages a kernel
	// has dropped; attribute AttrKernel.
	MessagesDropped = "ringactor.messages.dropped"
	// KernelRestarts is an Int64ObservableCounter of a kernel's restarts;
	// attribute AttrKernel.
	KernelRestarts = "ringactor.kernel.restarts"
	// KernelErrors is an Int64ObservableCounter of a kernel's errors;
	// attribute AttrKernel.
	KernelErrors = "ringactor.kernel.errors"
	// KernelLatency is a Float64ObservableGauge of a kernel's per-message
	// latency in seconds; attributes AttrKernel and AttrStat.
	KernelLatency = "ringactor.kernel.latency"
	// MessageLatency is a histogram, in seconds, of the time from a
	// message's admission to the end of its handling (handler and reply
	// hand-off); attribute AttrKernel. The Producer exports it from the
	// kernel loop's bucket counters.
	MessageLatency = "ringactor.message.latency"
	// QueueDelay is a histogram, in seconds, of the time a message waited in
	// its kernel's ring (overflow included) before its handler started;
	// attribute AttrKernel. Exported by the Producer.
	QueueDelay = "ringactor.message.queue_delay"
	// HandlerDuration is a histogram, in seconds, of one message's
	// handling: its handler call and its reply's hand-off; attribute
	// AttrKernel. Exported by the Producer.
	HandlerDuration = "ringactor.handler.duration"
	// ClusterRequestDuration is a Float64Histogram, in seconds, of a cluster
	// request as the caller sees it; attributes AttrKind and AttrOutcome.
	ClusterRequestDuration = "ringactor.cluster.request.duration"
)

// Attribute keys.
const (
	// AttrKernel names the kernel a measurement belongs to.
	AttrKernel = "kernel"
	// AttrBackend names the compute backend that ran the kernel.
	AttrBackend = "backend"
	// AttrDirection is DirectionHostToDevice or DirectionDeviceToHost.
	AttrDirection = "direction"
	// AttrStat is StatMin, StatAvg or StatMax.
	AttrStat = "stat"
	// AttrKind names the cluster kind a request went to.
	AttrKind = "kind"
	// AttrOutcome is OutcomeOK or OutcomeError.
	AttrOutcome = "outcome"
)

// Attribute values.
const (
	// DirectionHostToDevice marks bytes copied from host to device.
	DirectionHostToDevice = "host_to_device"
	// DirectionDeviceToHost marks bytes copied from device to host.
	DirectionDeviceToHost = "device_to_host"
	// StatMin marks the minimum latency.
	StatMin = "min"
	// StatAvg marks the average latency.
	StatAvg = "avg"
	// StatMax marks the maximum latency.
	StatMax = "max"
	// OutcomeOK marks a request answered with a reply.
	OutcomeOK = "ok"
	// OutcomeError marks a request answered with an error.
	OutcomeError = "error"
)

// Units.
const (
	unitSeconds = "s"
	unitBytes   = "By"
	unitMessage = "{message}"
)
