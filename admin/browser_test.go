package admin_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/ringactor/ringactor/admin"
)

// chromium returns the path of Debian's chromium, or skips the test saying
// why (.ci/run installs it).
func chromium(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	t.Skip("chromium is not installed (apt-get install chromium; .ci/run does): the dashboard's browser test needs it")
	return ""
}

// pageCounts is the JavaScript that reads the kernels table: name →
// processed, as the page shows it.
const pageCounts = `Object.fromEntries([...document.querySelectorAll("#kernels tbody tr[data-name]")]
	.map(r => [r.dataset.name, Number(r.querySelector("td.processed").dataset.value)]))`

// waitCounts waits until the page's kernels table shows exactly the
// kernels of /kernels with its processed counts, and returns that
// snapshot. A kernel's last counter update may land just after its last
// reply, so when the page does not catch up with one reading of /kernels
// within a while it compares with a fresh one.
func waitCounts(ctx context.Context, t *testing.T, f *fixture) admin.Snapshot {
	t.Helper()
	for {
		snap := f.kernels(t)
		m := map[string]uint64{}
		for _, k := range snap.Kernels {
			m[k.Name] = k.Processed
		}
		js, _ := json.Marshal(m)
		expr := fmt.Sprintf(`(() => { const want = %s, got = %s;
			const names = Object.keys(want);
			return names.length === Object.keys(got).length && names.every(n => got[n] === want[n]); })()`, js, pageCounts)
		_, err := chromedp.Run(ctx, chromedp.Poll[bool](expr, chromedp.WithPollingInterval(50*time.Millisecond), chromedp.WithPollingTimeout(20*time.Second)))
		if err == nil {
			return snap
		}
		if ctx.Err() != nil || !errors.Is(err, chromedp.ErrPollingTimeout) {
			got, _ := chromedp.Run(context.WithoutCancel(ctx), chromedp.Evaluate[map[string]uint64](pageCounts))
			t.Fatalf("the kernels table never showed /kernels' counts: %v\nwant %v\ngot  %v", err, m, got)
		}
	}
}

// waitFor waits until the JavaScript expression is truthy.
func waitFor(ctx context.Context, t *testing.T, what, expr string) {
	t.Helper()
	if _, err := chromedp.Run(ctx, chromedp.Poll[bool](expr, chromedp.WithPollingInterval(50*time.Millisecond), chromedp.WithPollingTimeout(0))); err != nil {
		t.Fatalf("%s: %v", what, err)
	}
}

// TestDashboardInBrowser drives the dashboard in headless chromium against
// a real member whose kernels, activations and stream graph are under
// traffic: the page loads with no console message of level error (a CSP
// violation would be one), the kernels table lists /kernels' kernels with
// its counts, which rise after more requests, the histogram and the stream
// graph are drawn, sorting and a filter work; it saves a screenshot.
func TestDashboardInBrowser(t *testing.T) {
	exe := chromium(t)
	f := startFixture(t)
	f.traffic(t, 40)

	// A hang guard only: chromium under -race on a loaded machine is slow.
	guard, cancelGuard := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancelGuard()
	actx, cancelAlloc := chromedp.NewExecAllocator(guard, append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(exe), chromedp.NoSandbox, chromedp.DisableGPU, chromedp.WindowSize(1360, 1500),
		chromedp.Flag("disable-dev-shm-usage", true), chromedp.UserDataDir(t.TempDir()))...)
	defer cancelAlloc()
	ctx, cancelTab := chromedp.NewContext(actx)
	defer cancelTab()

	var (
		mu      sync.Mutex
		console []string
	)
	consoleDone := make(chan struct{})
	msgs := chromedp.Console(ctx)
	go func() {
		defer close(consoleDone)
		for m, err := range msgs {
			if err != nil {
				return
			}
			if m.Type == chromedp.ConsoleError || m.IsException() || m.Type == chromedp.ConsoleWarning {
				mu.Lock()
				console = append(console, fmt.Sprintf("%s (%s:%d)", m, m.URL, m.Line))
				mu.Unlock()
			}
		}
	}()
	defer func() { cancelTab(); <-consoleDone }()

	if err := chromedp.Do(ctx, chromedp.Navigate(f.base+"/?interval_ms=250")); err != nil {
		t.Fatal(err)
	}
	before := waitCounts(ctx, t, f)
	if len(before.Kernels) != 7 { // square, 3 echo activations, 2 enrich, store
		t.Fatalf("/kernels lists %d kernels: %+v", len(before.Kernels), before.Kernels)
	}

	// More traffic: the table follows.
	f.traffic(t, 25)
	after := waitCounts(ctx, t, f)
	for _, k := range after.Kernels {
		if i := slices.IndexFunc(before.Kernels, func(b admin.Kernel) bool { return b.Name == k.Name }); i >= 0 && k.Processed <= before.Kernels[i].Processed {
			t.Errorf("kernel %s: processed %d after more traffic, %d before", k.Name, k.Processed, before.Kernels[i].Processed)
		}
	}

	// The selected kernel's histogram has bars, its history lines.
	waitFor(ctx, t, "histogram bars", `[...document.querySelectorAll("#histogram rect.bar-rect")].some(r => Number(r.getAttribute("height")) > 0)`)
	waitFor(ctx, t, "history lines", `document.querySelectorAll("#history path.rate[d^=M], #history path.p99[d^=M]").length === 2`)
	// The stream graph: three nodes and two coloured edges.
	waitFor(ctx, t, "stream graph", fmt.Sprintf(`(() => { const g = document.querySelector('svg.graph[data-graph=%q]');
		return g && g.querySelectorAll("g.node").length === 3 && g.querySelectorAll("path.edge[stroke]").length === 2
			&& g.querySelector('g.node[data-node="enrich"]').textContent.includes("×2"); })()`, f.g.ID()))
	// Cluster and devices.
	waitFor(ctx, t, "cluster members", fmt.Sprintf(`[...document.querySelectorAll("#members tbody tr")].some(r => r.textContent.includes(%q) && r.textContent.includes("echo: 3"))`, f.m.Address()))
	waitFor(ctx, t, "devices", `(() => { const c = document.querySelector('#devices .card[data-device="cpu"]'); return c && c.textContent.includes("kernels"); })()`)
	// The member's row: its own kinds only (not Proto.Actor's "prototopic"),
	// its usable devices only; the backend without a device is on the
	// devices panel, unavailable, with its reason.
	waitFor(ctx, t, "the member's kinds and devices", fmt.Sprintf(`(() => { const r = [...document.querySelectorAll("#members tbody tr")].find(r => r.textContent.includes(%q));
		if (!r) return false; const td = r.querySelectorAll("td");
		return td[2].textContent === "echo" && td[3].textContent.split(", ").includes("cpu") && !td[3].textContent.includes(%q); })()`, f.m.Address(), noDeviceName))
	waitFor(ctx, t, "the unusable device", fmt.Sprintf(`(() => { const c = document.querySelector('#devices .card[data-device=%q]');
		const bad = c && c.querySelector("dd.bad"); return !!bad && bad.textContent.startsWith("unavailable: ") && bad.textContent.includes(%q); })()`, noDeviceName, noDeviceReason))

	// Sorting by processed, descending: the busiest kernel first.
	busiest := slices.MaxFunc(after.Kernels, func(a, b admin.Kernel) int { return int(a.Processed) - int(b.Processed) })
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS(`#kernels th[data-key="processed"]`))); err != nil {
		t.Fatal(err)
	}
	waitFor(ctx, t, "sorted by processed", fmt.Sprintf(`(() => { const r = document.querySelector("#kernels tbody tr[data-name]");
		return r && Number(r.querySelector("td.processed").dataset.value) === %d; })()`, busiest.Processed))

	// The filter narrows the table to the stream graph's stages.
	var stages []string
	for _, k := range after.Kernels {
		if k.Kind == admin.KindStream {
			stages = append(stages, k.Name)
		}
	}
	if len(stages) != 3 {
		t.Fatalf("%d stream kernels in /kernels, want 3: %+v", len(stages), after.Kernels)
	}
	if err := chromedp.Do(ctx, chromedp.SendKeys(chromedp.CSS("#kernel-filter"), "stream")); err != nil {
		t.Fatal(err)
	}
	js, _ := json.Marshal(stages)
	waitFor(ctx, t, "filtered table", fmt.Sprintf(`(() => { const names = [...document.querySelectorAll("#kernels tbody tr[data-name]")].map(r => r.dataset.name).sort();
		return JSON.stringify(names) === JSON.stringify(%s.sort()); })()`, js))
	// Cleared again for the screenshot.
	if _, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`(() => { const i = document.querySelector("#kernel-filter");
		i.value = ""; return i.dispatchEvent(new Event("input")); })()`)); err != nil {
		t.Fatal(err)
	}
	waitFor(ctx, t, "unfiltered table", fmt.Sprintf(`document.querySelectorAll("#kernels tbody tr[data-name]").length === %d`, len(after.Kernels)))

	png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "dashboard.png")
	if err := os.WriteFile(path, png, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshot: %s (%d bytes)", path, len(png))

	// RINGACTOR_DASHBOARD_PNG=docs/dashboard.png refreshes the README's
	// screenshot: half a minute of varying traffic and backpressure first.
	if out := os.Getenv("RINGACTOR_DASHBOARD_PNG"); out != "" {
		stop := f.background()
		waitFor(ctx, t, "half a minute of history", `(() => { const l = document.querySelector("#history path.rate");
			return l && Number(l.dataset.points) >= 120; })()`)
		png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
		stop()
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(out, png, 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("README screenshot: %s", out)
	}

	mu.Lock()
	defer mu.Unlock()
	if len(console) > 0 {
		t.Errorf("the console has %d errors or warnings:\n%s", len(console), strings.Join(console, "\n"))
	}
}
