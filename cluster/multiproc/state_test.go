package multiproc

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/ringactor/ringactor/cluster"
	"github.com/ringactor/ringactor/internal/demo"
)

// counterEnv names the counter scenario's run (its idempotency keys' prefix)
// and counterBumpsEnv how many bumps it sends.
const (
	counterEnv      = "RINGACTOR_MULTIPROC_COUNTER_RUN"
	counterBumpsEnv = "RINGACTOR_MULTIPROC_COUNTER_BUMPS"
)

// counterResult is what the counter scenario reports: the count after its
// bumps, and after its last bump sent again with the same key.
type counterResult struct {
	Count   int64 `json:"count"`
	Retried int64 `json:"retried"`
}

// counterScenario bumps the counter identity "durable" by one, each bump
// with its own idempotency key, then sends the last bump again.
func counterScenario(ctx context.Context, cl *cluster.Member) (counterResult, error) {
	demo.Register()
	var r counterResult
	run, n := os.Getenv(counterEnv), envInt(counterBumpsEnv, 1)
	bump := func(i int) (int64, error) {
		kctx := cluster.WithIdempotencyKey(ctx, fmt.Sprintf("%s-%d", run, i))
		out, err := cluster.RequestJSON(kctx, cl, "counter", "durable", []byte(`{"by":1}`))
		if err != nil {
			return 0, err
		}
		var rep struct {
			Count int64 `json:"count"`
		}
		return rep.Count, json.Unmarshal(out, &rep)
	}
	for i := range n {
		c, err := bump(i)
		if err != nil {
			return r, fmt.Errorf("bump %d: %w", i, err)
		}
		r.Count = c
	}
	c, err := bump(n - 1)
	if err != nil {
		return r, fmt.Errorf("bump %d again: %w", n-1, err)
	}
	r.Retried = c
	return r, nil
}

// TestCounterSurvivesSIGKILL: a member with the embedded state store
// (file://) saves the counter write-through; killed with SIGKILL and
// started again on the same file, it continues the count, and a bump sent
// again with its idempotency key is not applied twice.
func TestCounterSurvivesSIGKILL(t *testing.T) {
	store := "file://" + filepath.Join(t.TempDir(), "state.db")
	count := func(seed, run string, bumps int) counterResult {
		t.Helper()
		client := startProc(t, "counter", []string{seed}, membersEnv+"=1", counterEnv+"="+run, fmt.Sprintf("%s=%d", counterBumpsEnv, bumps))
		var res counterResult
		if err := json.Unmarshal([]byte(client.expect(t, "RESULT ", 60*time.Second)), &res); err != nil {
			t.Fatal(err)
		}
		client.stop(t)
		return res
	}
	m1 := startProc(t, "member", nil, stateStoreEnv+"="+store)
	addr := m1.expect(t, "ADDR ", 30*time.Second)
	if got := count(addr, "first", 5); got.Count != 5 || got.Retried != 5 {
		t.Fatalf("first member: %+v, want count 5, and 5 after the retried bump", got)
	}
	m1.kill(t)
	m2 := startProc(t, "member", nil, stateStoreEnv+"="+store)
	addr = m2.expect(t, "ADDR ", 30*time.Second)
	if got := count(addr, "second", 3); got.Count != 8 || got.Retried != 8 {
		t.Fatalf("after a SIGKILL of the owner: %+v, want count 8 (5 kept), and 8 after the retried bump", got)
	}
}
