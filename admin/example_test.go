package admin_test

import (
	"context"
	"fmt"
	"io"
	"log"
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
	defer func() {
		if err := srv.Close(ctx); err != nil {
			log.Fatal(err)
		}
	}()
	resp, err := http.Get("http://" + srv.Addr() + "/readyz")
	if err != nil {
		fmt.Println(err)
		return
	}
	body, err := io.ReadAll(resp.Body)
	if cerr := resp.Body.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		fmt.Println(err)
		return
	}
	http.DefaultClient.CloseIdleConnections()
	fmt.Print(resp.StatusCode, " ", string(body))
	// Output: 200 ready
}
