package admin

import (
	"encoding/json"
	"net/http"
	"net/http/pprof"
	"time"

	"github.com/ringactor/ringactor/cluster"
	"github.com/ringactor/ringactor/gpu"
	"github.com/ringactor/ringactor/stream"
	"github.com/ringactor/ringactor/telemetry"
)

// Option configures New.
type Option func(*config)

type config struct {
	metrics http.Handler
	kernels telemetry.Source
	kernel  func(id string) (telemetry.KernelStats, error)
	graphs  func() []*stream.Graph
	member  func() *cluster.Member
	devices func() []gpu.Backend
	ready   func() error
	pprof   bool
	now     func() time.Time
}

// WithMetrics serves h at /metrics (e.g. telemetry.Providers'
// PrometheusHandler). Without it /metrics answers 404.
func WithMetrics(h http.Handler) Option { return func(c *config) { c.metrics = h } }

// WithKernels makes /kernels report src's kernels. Without it /kernels
// reports none.
func WithKernels(src telemetry.Source) Option {
	return func(c *config) { c.kernels, c.kernel = src, nil }
}

// WithReadiness makes /readyz answer 503 with ready's error while it returns
// one, 200 otherwise. Without it /readyz answers 200 like /healthz.
func WithReadiness(ready func() error) Option { return func(c *config) { c.ready = ready } }

// WithPprof serves net/http/pprof under /debug/pprof/ (off by default: it
// exposes profiles and, through /debug/pprof/cmdline, the command line).
func WithPprof(on bool) Option { return func(c *config) { c.pprof = on } }

// New returns the admin handler.
func New(opts ...Option) http.Handler {
	c := config{now: time.Now}
	for _, o := range opts {
		if o != nil {
			o(&c)
		}
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		_, _ = w.Write([]byte("ok\n"))
	})
	mux.HandleFunc("GET /readyz", c.readyz)
	mux.HandleFunc("GET /kernels", c.kernelsJSON)
	c.dashboard(mux)
	if c.metrics != nil {
		mux.Handle("GET /metrics", c.metrics)
	}
	if c.pprof {
		mux.HandleFunc("/debug/pprof/", pprof.Index)
		mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
		mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
		mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
		mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	}
	return secure(mux)
}

// readyz answers 200 "ready" or 503 with the reason.
func (c *config) readyz(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	if c.ready != nil {
		if err := c.ready(); err != nil {
			w.WriteHeader(http.StatusServiceUnavailable)
			_, _ = w.Write([]byte("not ready: " + err.Error() + "\n"))
			return
		}
	}
	_, _ = w.Write([]byte("ready\n"))
}

// kernelsJSON answers the Snapshot of the kernels as JSON.
func (c *config) kernelsJSON(w http.ResponseWriter, _ *http.Request) {
	var stats []telemetry.KernelStats
	if c.kernels != nil {
		stats = c.kernels()
	}
	w.Header().Set("Content-Type", "application/json")
	s := NewSnapshot(c.now(), stats)
	c.classify(s.Kernels)
	_ = json.NewEncoder(w).Encode(s)
}
