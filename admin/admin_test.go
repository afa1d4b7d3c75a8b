package admin

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/ringactor/ringactor/internal/testutil/testproc"
	"github.com/ringactor/ringactor/telemetry"
)

// TestMain checks for leaked goroutines; Proto.Actor's log throttles (of
// the fixture's cluster member) end by themselves.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m, testproc.ProtoActorThrottles()...) }

func serve(t *testing.T, h http.Handler, path string) (int, string) {
	t.Helper()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("GET", path, nil))
	b, _ := io.ReadAll(rec.Body)
	return rec.Code, string(b)
}

func TestListenAddress(t *testing.T) {
	for in, want := range map[string]string{
		"9090": "127.0.0.1:9090", ":9090": "127.0.0.1:9090", "0.0.0.0:80": "0.0.0.0:80",
		"[::1]:7": "[::1]:7", "example.com:1": "example.com:1",
	} {
		if got, err := ListenAddress(in); err != nil || got != want {
			t.Errorf("ListenAddress(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, bad := range []string{"", "x", "1:2:3", "host:port", "127.0.0.1:65536", "99999", "-1"} {
		if _, err := ListenAddress(bad); !errors.Is(err, ErrBadAddress) {
			t.Errorf("ListenAddress(%q) = %v, want ErrBadAddress", bad, err)
		}
	}
}

func TestHandlerEndpoints(t *testing.T) {
	var notReady error = errors.New("joining")
	h := New(
		WithReadiness(func() error { return notReady }),
		WithKernels(func() []telemetry.KernelStats {
			lat := telemetry.NewHistogram()
			for range 10 {
				lat.Observe(3 * time.Microsecond)
			}
			return []telemetry.KernelStats{
				{Kernel: "z", State: "active", Backend: "cpu", Processed: 10, Latency: lat.Snapshot()},
				{Kernel: "a", State: "deactivated", Backend: "cuda", Depth: 4},
			}
		}),
		WithMetrics(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, "m 1\n") })))
	if code, body := serve(t, h, "/healthz"); code != 200 || body != "ok\n" {
		t.Errorf("/healthz = %d %q", code, body)
	}
	if code, body := serve(t, h, "/readyz"); code != 503 || !strings.Contains(body, "joining") {
		t.Errorf("/readyz not ready = %d %q", code, body)
	}
	notReady = nil
	if code, _ := serve(t, h, "/readyz"); code != 200 {
		t.Errorf("/readyz ready = %d", code)
	}
	if code, body := serve(t, h, "/metrics"); code != 200 || body != "m 1\n" {
		t.Errorf("/metrics = %d %q", code, body)
	}
	if code, _ := serve(t, h, "/debug/pprof/"); code != 404 {
		t.Errorf("/debug/pprof/ without WithPprof = %d", code)
	}
	code, body := serve(t, h, "/kernels")
	var s Snapshot
	if err := json.Unmarshal([]byte(body), &s); code != 200 || err != nil {
		t.Fatalf("/kernels = %d %v %q", code, err, body)
	}
	if len(s.Kernels) != 2 || s.Kernels[0].Name != "a" || s.Kernels[1].Name != "z" {
		t.Fatalf("kernels not sorted: %+v", s.Kernels)
	}
	z := s.Kernels[1]
	if z.Processed != 10 || z.Latency.Count != 10 || z.Latency.P50 < 2250 || z.Latency.P50 > 3750 || z.Placement != "cpu" {
		t.Errorf("kernel z = %+v", z)
	}
	if s.Kernels[0].Depth != 4 || s.Time.IsZero() {
		t.Errorf("kernel a = %+v, time %v", s.Kernels[0], s.Time)
	}
}

func TestHandlerWithoutSources(t *testing.T) {
	h := New()
	if code, _ := serve(t, h, "/readyz"); code != 200 {
		t.Errorf("/readyz = %d", code)
	}
	if code, _ := serve(t, h, "/metrics"); code != 404 {
		t.Errorf("/metrics without WithMetrics = %d, want 404", code)
	}
	if _, body := serve(t, h, "/kernels"); !strings.Contains(body, `"kernels":[]`) {
		t.Errorf("/kernels = %q, want an empty list", body)
	}
}

func TestListenServesAndCloses(t *testing.T) {
	ctx := context.Background()
	s, err := Listen(ctx, "127.0.0.1:0", New(WithPprof(true)))
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.Get("http://" + s.Addr() + "/debug/pprof/")
	if err != nil {
		t.Fatal(err)
	}
	_ = resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Errorf("/debug/pprof/ with WithPprof = %d", resp.StatusCode)
	}
	http.DefaultClient.CloseIdleConnections()
	if err := s.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(ctx); err != nil {
		t.Errorf("second Close = %v", err)
	}
	if _, err := http.Get("http://" + s.Addr() + "/healthz"); err == nil {
		t.Error("the closed server still answers")
	}
	if _, err := Listen(ctx, "nope", New()); !errors.Is(err, ErrBadAddress) {
		t.Errorf("Listen(nope) = %v", err)
	}
}
