package admin_test

import (
	"context"
	"fmt"
	"io"
	"net/http"

	"github.com/ringactor/ringactor/admin"
	"github.com/ringactor/ringactor/telemetry"
)

// Example serves the admin endpoint on a free loopback port: readiness
// from the application, kernels from a runtime's Stats (here a fixed
// source).
func Example() {
	ctx := context.Background()
	h := admin.New(
		admin.WithReadiness(func() error { return nil }), // e.g. member.Ready
		admin.WithKernels(func() []telemetry.KernelStats { // e.g. rt.Stats
			return []telemetry.KernelStats{{Kernel: "k", State: "active", Processed: 42}}
		}))
	srv, err := admin.Listen(ctx, "127.0.0.1:0", h)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer srv.Close(ctx)
	resp, err := http.Get("http://" + srv.Addr() + "/readyz")
	if err != nil {
		fmt.Println(err)
		return
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	http.DefaultClient.CloseIdleConnections()
	fmt.Print(resp.StatusCode, " ", string(body))
	// Output: 200 ready
}
