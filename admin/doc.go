// Package admin is ringactor's operations endpoint: an HTTP handler serving
// /metrics (Prometheus text format), /healthz (the process is alive),
// /readyz (200 once the node is ready to serve, 503 before and while it
// leaves), /kernels (JSON: every ring kernel's state, placement, counters,
// depth and latency percentiles, what `ringactor top` reads) and, when
// asked for, /debug/pprof. Listen serves it on a loopback address unless
// told otherwise.
package admin
