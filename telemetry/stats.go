package telemetry

import "time"

// KernelStats is one ring kernel's counters as read from its control block by
// an observer, never on the hot path.
type KernelStats struct {
	// Kernel is the kernel's name, the AttrKernel attribute.
	Kernel string
	// Backend is the compute backend the kernel runs on.
	Backend string
	// State is the kernel's lifecycle state name.
	State string

	// Processed is the number of messages processed since launch.
	Processed uint64
	// Dropped is the number of messages dropped since launch.
	Dropped uint64
	// Errors is the number of errors since launch.
	Errors uint64
	// Restarts is the number of restarts since launch.
	Restarts uint64

	// Depth is the number of messages waiting in the input ring and overflow.
	Depth int64
	// Capacity is the input ring's capacity in messages.
	Capacity int
	// MemoryBytes is the bytes held by the kernel (rings, control block).
	MemoryBytes int64

	// LatencyMin is the smallest per-message latency observed. A busy
	// ringactor kernel times a sample of its messages (one in 16 while
	// they arrive less than 10 µs apart): the latency words and
	// LastActivity are those of the timed messages.
	LatencyMin time.Duration
	// LatencyAvg is the average per-message latency.
	LatencyAvg time.Duration
	// LatencyMax is the largest per-message latency observed.
	LatencyMax time.Duration

	// LastActivity is when the kernel last processed a (timed) message.
	LastActivity time.Time

	// Latency is the histogram of the time from a message's admission to
	// the end of its handling (empty when the runtime's telemetry is off).
	// Under sampling each timed message is counted with its weight (itself
	// and the untimed messages handled since the previous timed one), so
	// Count still counts handled messages, up to the last timed one.
	Latency HistogramSnapshot
	// QueueDelay is the histogram of the time messages waited before their
	// handler started (a device ring kernel's: until its pump put them
	// into the device's input ring).
	QueueDelay HistogramSnapshot
	// HandlerTime is the histogram of each message's handling: its handler
	// and its reply's hand-off (a device ring kernel's: the device's time,
	// from its input ring to the reply's hand-off).
	HandlerTime HistogramSnapshot
}

// Source returns the current stats of every live kernel. It is called once
// per collection from an OpenTelemetry callback, possibly from any goroutine.
type Source func() []KernelStats
