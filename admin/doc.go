// Package admin is ringactor's operations endpoint: an HTTP handler serving
// a live, read-only dashboard at / (HTML, CSS and JavaScript embedded in
// the binary, drawn with SVG, under a strict Content-Security-Policy),
// /metrics (Prometheus text format), /healthz (the process is alive),
// /readyz (200 once the node is ready to serve, 503 before and while it
// leaves), /kernels (JSON: every ring kernel's kind, state, placement,
// counters, depth and latency percentiles, what `ringactor top` and the
// dashboard read), the dashboard's other JSON (/api/histogram,
// /api/graphs, /api/cluster, /api/devices) and, when asked for,
// /debug/pprof. Everything is read when requested: nothing is recorded per
// message for it. Listen serves it on a loopback address unless told
// otherwise.
package admin
