package admin

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/ringactor/ringactor/gpu"
	"github.com/ringactor/ringactor/gpu/cuda"
	"github.com/ringactor/ringactor/telemetry"
)

// fakeKernels is a kernel source: z has latencies, a is on a device.
func fakeKernels() []telemetry.KernelStats {
	lat := telemetry.NewHistogram()
	for i := range 100 {
		lat.Observe(time.Duration(1000+i*100) * time.Nanosecond)
	}
	lat.Observe(time.Minute * 5) // the overflow bucket
	return []telemetry.KernelStats{
		{Kernel: "z", State: "active", Backend: "cpu", Processed: 101, Errors: 2, Latency: lat.Snapshot()},
		{Kernel: "a", State: "active", Backend: "cuda:0", Processed: 7, Restarts: 1},
		{Kernel: "q", State: "active", Backend: "elsewhere", Processed: 1},
	}
}

// fakeBackend is a gpu.Backend with device epochs.
type fakeBackend struct {
	gpu.Backend
	name  string
	kind  gpu.BackendKind
	avail error
}

func (b fakeBackend) Name() string          { return b.name }
func (b fakeBackend) Kind() gpu.BackendKind { return b.kind }
func (b fakeBackend) Available() error      { return b.avail }
func (b fakeBackend) EpochStats() cuda.EpochStats {
	return cuda.EpochStats{Count: 3, RingsParked: 5, Total: 30 * time.Millisecond, Max: 20 * time.Millisecond, Last: 4 * time.Millisecond, LastReason: "cuModuleLoadDataEx"}
}

// request answers method path from h.
func request(h http.Handler, method, path string) *httptest.ResponseRecorder {
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(method, path, nil))
	return rec
}

// TestDashboardHeadersAndAssets: the page, its assets and the JSON
// endpoints are served with the strict Content-Security-Policy (no inline
// script or style allowed) and their content types.
func TestDashboardHeadersAndAssets(t *testing.T) {
	h := New(WithKernels(fakeKernels))
	for path, ctype := range map[string]string{
		"/": "text/html", "/static/app.js": "javascript", "/static/style.css": "text/css", "/static/favicon.svg": "image/svg+xml",
		"/kernels": "application/json", "/api/graphs": "application/json", "/api/cluster": "application/json",
		"/api/devices": "application/json", "/api/histogram?kernel=z": "application/json",
	} {
		rec := request(h, "GET", path)
		if rec.Code != 200 || !strings.Contains(rec.Header().Get("Content-Type"), ctype) {
			t.Errorf("GET %s = %d %q, want 200 %s", path, rec.Code, rec.Header().Get("Content-Type"), ctype)
		}
		csp := rec.Header().Get("Content-Security-Policy")
		if csp != ContentSecurityPolicy || rec.Header().Get("X-Content-Type-Options") != "nosniff" {
			t.Errorf("GET %s: CSP %q, nosniff %q", path, csp, rec.Header().Get("X-Content-Type-Options"))
		}
	}
	for _, want := range []string{"default-src 'none'", "script-src 'self'", "style-src 'self'", "connect-src 'self'", "frame-ancestors 'none'"} {
		if !strings.Contains(ContentSecurityPolicy, want) {
			t.Errorf("CSP lacks %q", want)
		}
	}
	if strings.Contains(ContentSecurityPolicy, "unsafe") || strings.Contains(ContentSecurityPolicy, "http") {
		t.Errorf("CSP %q allows inline code or another origin", ContentSecurityPolicy)
	}
}

// TestDashboardPageHasNoInlineCode: the page has no inline script, style
// or event handler (the CSP would block them), loads nothing from another
// origin, and every asset it names is served.
func TestDashboardPageHasNoInlineCode(t *testing.T) {
	h := New()
	page := request(h, "GET", "/").Body.String()
	for _, bad := range []*regexp.Regexp{
		regexp.MustCompile(`<script[^>]*>\s*[^<\s]`), // a script with a body
		regexp.MustCompile(`<style`), regexp.MustCompile(`\sstyle=`), regexp.MustCompile(`\son[a-z]+=`),
		regexp.MustCompile(`(?:src|href)="(?:[a-z]+:)?//`),
	} {
		if m := bad.FindString(page); m != "" {
			t.Errorf("the page has %q", m)
		}
	}
	for _, tag := range regexp.MustCompile(`<script[^>]*>`).FindAllString(page, -1) {
		if !strings.Contains(tag, ` src="`) {
			t.Errorf("the page has an inline script: %q", tag)
		}
	}
	assets := regexp.MustCompile(`(?:src|href)="([^"#]+)"`).FindAllStringSubmatch(page, -1)
	if len(assets) < 3 {
		t.Fatalf("the page names %d assets", len(assets))
	}
	for _, a := range assets {
		if rec := request(h, "GET", "/"+a[1]); rec.Code != 200 || rec.Body.Len() == 0 {
			t.Errorf("asset %s = %d", a[1], rec.Code)
		}
	}
	js := request(h, "GET", "/static/app.js").Body.String()
	for _, bad := range []string{"eval(", "new Function", "innerHTML", "http://", "https://"} {
		if strings.Contains(strings.ReplaceAll(js, "http://www.w3.org/2000/svg", ""), bad) {
			t.Errorf("app.js uses %q", bad)
		}
	}
}

// TestDashboardIsReadOnly: every dashboard path answers GET and HEAD only.
func TestDashboardIsReadOnly(t *testing.T) {
	h := New(WithKernels(fakeKernels))
	for _, path := range []string{"/", "/static/app.js", "/kernels", "/api/graphs", "/api/cluster", "/api/devices", "/api/histogram?kernel=z"} {
		for _, method := range []string{"POST", "PUT", "PATCH", "DELETE"} {
			if rec := request(h, method, path); rec.Code != http.StatusMethodNotAllowed {
				t.Errorf("%s %s = %d, want 405", method, path, rec.Code)
			}
		}
		if rec := request(h, "HEAD", path); rec.Code != 200 {
			t.Errorf("HEAD %s = %d", path, rec.Code)
		}
	}
	if rec := request(h, "GET", "/nothing-here"); rec.Code != 404 {
		t.Errorf("GET /nothing-here = %d, want 404", rec.Code)
	}
}

// TestHistogramEndpoint: /api/histogram serves a kernel's non-empty
// buckets, whose counts add up to its count, with bounds from the layout.
func TestHistogramEndpoint(t *testing.T) {
	h := New(WithKernels(fakeKernels))
	rec := request(h, "GET", "/api/histogram?kernel=z")
	var got Histogram
	if err := json.Unmarshal(rec.Body.Bytes(), &got); err != nil || rec.Code != 200 {
		t.Fatalf("%d %v %s", rec.Code, err, rec.Body)
	}
	var sum uint64
	for i, b := range got.Buckets {
		sum += b.Count
		last := i == len(got.Buckets)-1
		if b.Count == 0 || (b.Hi <= b.Lo) != last || (last && b.Hi != 0) || (i > 0 && b.Lo < got.Buckets[i-1].Hi) {
			t.Errorf("bucket %d: %+v", i, b)
		}
	}
	if got.Kernel != "z" || got.Of != "latency" || got.Count != 101 || sum != 101 || got.Summary.P50 < 4000 || got.Summary.P50 > 7500 ||
		got.Bounds.Min != 64 || got.Bounds.Max < 60e9 {
		t.Errorf("histogram %+v", got)
	}
	if rec := request(h, "GET", "/api/histogram?kernel=a&of=queue_delay"); rec.Code != 200 || !strings.Contains(rec.Body.String(), `"buckets":[]`) {
		t.Errorf("an empty histogram = %d %s", rec.Code, rec.Body)
	}
	if rec := request(h, "GET", "/api/histogram?kernel=nope"); rec.Code != 404 {
		t.Errorf("unknown kernel = %d", rec.Code)
	}
	if rec := request(h, "GET", "/api/histogram?kernel=z&of=bogus"); rec.Code != 400 {
		t.Errorf("of=bogus = %d", rec.Code)
	}
}

// TestDevicesEndpoint: /api/devices lists every backend (with its
// availability and a CUDA backend's device epochs) and every placement,
// each with its kernels and their summed counters.
func TestDevicesEndpoint(t *testing.T) {
	h := New(WithKernels(fakeKernels), WithDevices(func() []gpu.Backend {
		return []gpu.Backend{fakeBackend{name: "cpu", kind: gpu.KindCPU},
			fakeBackend{name: "cuda:0", kind: gpu.KindCUDA}, fakeBackend{name: "cuda:1", kind: gpu.KindCUDA, avail: gpu.ErrDeviceNotAvailable}}
	}))
	var got struct{ Devices []Device }
	rec := request(h, "GET", "/api/devices")
	if err := json.Unmarshal(rec.Body.Bytes(), &got); err != nil {
		t.Fatal(err)
	}
	if len(got.Devices) != 4 {
		t.Fatalf("devices %+v", got.Devices)
	}
	cpu, c0, c1, other := got.Devices[0], got.Devices[1], got.Devices[2], got.Devices[3]
	if cpu.Name != "cpu" || len(cpu.Kernels) != 1 || cpu.Processed != 101 || cpu.Errors != 2 || !cpu.Available {
		t.Errorf("cpu %+v", cpu)
	}
	if c0.Kind != "cuda" || len(c0.Kernels) != 1 || c0.Restarts != 1 || c0.Epochs == nil || c0.Epochs.Count != 3 || c0.Epochs.Max != int64(20*time.Millisecond) || c0.Epochs.LastReason != "cuModuleLoadDataEx" {
		t.Errorf("cuda:0 %+v", c0)
	}
	if c1.Available || c1.Reason == "" || len(c1.Kernels) != 0 {
		t.Errorf("cuda:1 %+v", c1)
	}
	if other.Name != "elsewhere" || len(other.Kernels) != 1 || other.Epochs != nil {
		t.Errorf("a placement without a backend %+v", other)
	}
}

// TestEndpointsWithoutSources: without a member, graphs or devices the
// views answer empty documents, not errors.
func TestEndpointsWithoutSources(t *testing.T) {
	h := New()
	for path, want := range map[string]string{
		"/api/cluster": `{"member":false}`, "/api/graphs": `"graphs":[]`, "/api/devices": `"devices":[]`,
	} {
		if rec := request(h, "GET", path); rec.Code != 200 || !strings.Contains(rec.Body.String(), want) {
			t.Errorf("%s = %d %s, want %s", path, rec.Code, rec.Body, want)
		}
	}
	if rec := request(h, "GET", "/api/histogram?kernel=x"); rec.Code != 404 {
		t.Errorf("/api/histogram without kernels = %d", rec.Code)
	}
}
