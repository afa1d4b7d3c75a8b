package admin_test

import (
	"context"
	"io"
	"net/http"
	"sync"
	"testing"
	"time"
)

// dashboardPaths are what one refresh of the dashboard fetches.
var dashboardPaths = []string{"/kernels", "/api/histogram?kernel=square", "/api/graphs", "/api/cluster", "/api/devices"}

// poll fetches every dashboard path every period until stop is closed
// (period 0: back to back, the worst case).
func poll(base string, period time.Duration, stop <-chan struct{}) {
	c := &http.Client{Transport: &http.Transport{}}
	defer c.CloseIdleConnections()
	var tick <-chan time.Time // nil (never) when back to back
	if period > 0 {
		t := time.NewTicker(period)
		defer t.Stop()
		tick = t.C
	}
	for {
		for _, p := range dashboardPaths {
			if resp, err := c.Get(base + p); err == nil {
				_, _ = io.Copy(io.Discard, resp.Body)
				_ = resp.Body.Close()
			}
		}
		if tick == nil {
			select {
			case <-stop:
				return
			default:
				continue
			}
		}
		select {
		case <-stop:
			return
		case <-tick:
		}
	}
}

// BenchmarkRequestWhileDashboardPolls measures a kernel's request path
// (Request to the fixture's square kernel, in a member with activations
// and a stream graph) alone, then with a client polling every dashboard
// endpoint beside it: once a second (the page's default), ten times a
// second (ten open dashboards), and back to back (the worst case). The
// ratio of each to "alone" is the dashboard's cost.
func BenchmarkRequestWhileDashboardPolls(b *testing.B) {
	f := startFixture(b)
	f.traffic(b, 20)
	ctx := context.Background()
	for _, c := range []struct {
		name   string
		period time.Duration
		polled bool
	}{{"alone", 0, false}, {"polled_1s", time.Second, true}, {"polled_100ms", 100 * time.Millisecond, true}, {"polled_nonstop", 0, true}} {
		b.Run(c.name, func(b *testing.B) {
			stop := make(chan struct{})
			var wg sync.WaitGroup
			if c.polled {
				wg.Go(func() { poll(f.base, c.period, stop) })
			}
			for i := 0; b.Loop(); i++ {
				if _, err := f.sq.Request(ctx, ping{i & 1023}); err != nil {
					b.Fatal(err)
				}
			}
			close(stop)
			wg.Wait()
		})
	}
}

// BenchmarkDashboardEndpoints measures each endpoint one refresh of the
// dashboard fetches, over loopback HTTP, against the fixture.
func BenchmarkDashboardEndpoints(b *testing.B) {
	f := startFixture(b)
	f.traffic(b, 20)
	c := &http.Client{Transport: &http.Transport{}}
	defer c.CloseIdleConnections()
	for _, p := range dashboardPaths {
		b.Run(p, func(b *testing.B) {
			for b.Loop() {
				resp, err := c.Get(f.base + p)
				if err != nil {
					b.Fatal(err)
				}
				_, _ = io.Copy(io.Discard, resp.Body)
				_ = resp.Body.Close()
			}
		})
	}
}
