package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ringactor/ringactor/actors"
	"github.com/ringactor/ringactor/admin"
	"github.com/ringactor/ringactor/cluster"
	"github.com/ringactor/ringactor/internal/demo"
	"github.com/ringactor/ringactor/internal/testutil/testproc"
)

// startServeAdmin runs `ringactor serve --admin 127.0.0.1:0 --log-format
// json` with args in a child process (Proto.Actor's actor metrics race in
// Proto.Actor's own code: see racecheck) and returns the member's address
// and the admin endpoint's, read from its JSON log. The member is stopped
// with SIGTERM at the end of the test and must exit 0.
func startServeAdmin(t *testing.T, env []string, args ...string) (member, adminAddr string) {
	t.Helper()
	cmd := commandProcess(t, append([]string{"serve", "--admin", "127.0.0.1:0", "--log-format", "json"}, args...)...)
	cmd.Env = append(cmd.Env, env...)
	stderr := &testproc.Buffer{}
	cmd.Stderr = stderr
	member = testproc.StartJoined(t, "serve", cmd, stderr, nil)
	// The admin endpoint starts, and is logged, before the member.
	for _, l := range strings.Split(stderr.String(), "\n") {
		var rec map[string]any
		if json.Unmarshal([]byte(l), &rec) == nil && rec["msg"] == "admin endpoint" {
			adminAddr, _ = rec["address"].(string)
		}
	}
	if adminAddr == "" {
		t.Fatalf("serve logged no admin endpoint address:\n%s", stderr)
	}
	return member, adminAddr
}

// waitLatencies waits until /kernels at base reports n latencies of kernel:
// a message's latency is recorded when the member's loop next reads its
// clock (the next message or its batch's end, just after the reply left).
func waitLatencies(t *testing.T, base, kernel string, n uint64) {
	t.Helper()
	ctx := testCtx(t)
	for ctx.Err() == nil {
		_, body := get(t, base+"/kernels")
		var snap admin.Snapshot
		if err := json.Unmarshal([]byte(body), &snap); err != nil {
			t.Fatalf("/kernels: %v", err)
		}
		for _, k := range snap.Kernels {
			if k.Name == kernel && k.Latency.Count >= n {
				return
			}
		}
		runtime.Gosched()
	}
	t.Fatalf("%s never reported %d latencies", kernel, n)
}

// get fetches url and returns the status and body.
func get(t *testing.T, url string) (int, string) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// TestServeAdminMetricsAfterRequests scrapes /metrics of a running member
// after N requests to one identity and finds that identity's kernel series
// with N processed messages and N latencies, /kernels with the same count,
// and /healthz, /readyz up.
func TestServeAdminMetricsAfterRequests(t *testing.T) {
	name := fmt.Sprintf("admin-metrics-%d", time.Now().UnixNano())
	member, adminAddr := startServeAdmin(t, nil, "--cluster", name, "--peers", "")
	base := "http://" + adminAddr
	ctx := testCtx(t)
	client, err := cluster.Start(ctx, name, cluster.Peers([]string{member}), nil, cluster.AsClient(), cluster.WithLogger(actors.DiscardLogger()))
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close(context.Background())
	demo.Register()
	const n = 17
	for i := range n {
		if _, err := cluster.RequestJSON(ctx, client, "echo", "m1", []byte(fmt.Sprintf(`{"i":%d}`, i))); err != nil {
			t.Fatalf("request %d: %v", i, err)
		}
	}
	waitLatencies(t, base, "echo/m1", n)
	if code, body := get(t, base+"/healthz"); code != 200 {
		t.Errorf("/healthz = %d %q", code, body)
	}
	if code, body := get(t, base+"/readyz"); code != 200 {
		t.Errorf("/readyz = %d %q", code, body)
	}
	code, text := get(t, base+"/metrics")
	if code != 200 {
		t.Fatalf("/metrics = %d", code)
	}
	series := func(prefix string) string {
		for _, l := range strings.Split(text, "\n") {
			if strings.HasPrefix(l, prefix+"{") && strings.Contains(l, `kernel="echo/m1"`) {
				return l
			}
		}
		return ""
	}
	want := fmt.Sprintf(" %d", n)
	for _, name := range []string{"ringactor_messages_processed_total", "ringactor_message_latency_seconds_count",
		"ringactor_message_queue_delay_seconds_count", "ringactor_handler_duration_seconds_count"} {
		if l := series(name); !strings.HasSuffix(l, want) {
			t.Errorf("%s of echo/m1 = %q, want %d", name, l, n)
		}
	}
	if !strings.Contains(text, `ringactor_cluster="`+name+`"`) && !strings.Contains(text, "target_info{") {
		t.Errorf("no resource attributes (target_info) in /metrics")
	}
	if !strings.Contains(text, "protoactor_") {
		t.Error("no Proto.Actor actor metrics in /metrics")
	}
	if code, _ := get(t, base+"/debug/pprof/"); code != http.StatusNotFound {
		t.Errorf("/debug/pprof/ without --pprof = %d, want 404", code)
	}
	_, body := get(t, base+"/kernels")
	var snap admin.Snapshot
	if err := json.Unmarshal([]byte(body), &snap); err != nil {
		t.Fatalf("/kernels: %v: %s", err, body)
	}
	var k *admin.Kernel
	for i := range snap.Kernels {
		if snap.Kernels[i].Name == "echo/m1" {
			k = &snap.Kernels[i]
		}
	}
	if k == nil || k.Processed != n || k.Latency.Count != n || k.Latency.P50 <= 0 || k.State != "active" || k.Placement == "" || k.Kind != "echo" {
		t.Errorf("/kernels echo/m1 = %+v", k)
	}
	// The dashboard and its views' endpoints, wired by serve.
	resp, err := http.Get(base + "/")
	if err != nil {
		t.Fatal(err)
	}
	_ = resp.Body.Close()
	if resp.StatusCode != 200 || resp.Header.Get("Content-Security-Policy") != admin.ContentSecurityPolicy {
		t.Errorf("/ = %d, CSP %q", resp.StatusCode, resp.Header.Get("Content-Security-Policy"))
	}
	var st struct {
		Member  bool
		Members []cluster.MemberStatus
	}
	if _, body := get(t, base+"/api/cluster"); json.Unmarshal([]byte(body), &st) != nil || !st.Member || len(st.Members) != 1 ||
		!slices.Contains(st.Members[0].Identities["echo"], "m1") {
		t.Errorf("/api/cluster = %s", body)
	}
	if _, body := get(t, base+"/api/devices"); !strings.Contains(body, `"echo/m1"`) {
		t.Errorf("/api/devices = %s", body)
	}
	if code, body := get(t, base+"/api/histogram?kernel=echo/m1"); code != 200 || !strings.Contains(body, fmt.Sprintf(`"count":%d`, n)) {
		t.Errorf("/api/histogram = %d %s", code, body)
	}
}

// TestServeReadinessAcrossJoinAndLeave: /readyz answers 503 before the
// member exists (serve starts the admin endpoint first), 200 once it has
// joined with its kinds, 503 again from the moment it leaves.
func TestServeReadinessAcrossJoinAndLeave(t *testing.T) {
	ctx := testCtx(t)
	addr := "127.0.0.1:0"
	adm := &adminFlags{addr: &addr, pprof: new(bool)}
	name := fmt.Sprintf("admin-ready-%d", time.Now().UnixNano())
	ops, err := startOps(ctx, adm, name, cluster.DefaultAddress, actors.DiscardLogger())
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := ops.close(); err != nil {
			t.Error(err)
		}
	}()
	base := "http://" + ops.server.Addr()
	if code, body := get(t, base+"/readyz"); code != http.StatusServiceUnavailable || !strings.Contains(body, "starting") {
		t.Errorf("/readyz before the member = %d %q, want 503 starting", code, body)
	}
	m, err := cluster.Start(ctx, name, cluster.Peers(nil), demo.Kinds(func() string { return "" }), cluster.WithLogger(actors.DiscardLogger()), cluster.WithTelemetry(ops.prov))
	if err != nil {
		t.Fatal(err)
	}
	ops.member.Store(m)
	if err := m.WaitReady(ctx); err != nil {
		t.Fatal(err)
	}
	if code, body := get(t, base+"/readyz"); code != http.StatusOK {
		t.Errorf("/readyz after joining = %d %q, want 200", code, body)
	}
	if err := m.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if code, body := get(t, base+"/readyz"); code != http.StatusServiceUnavailable || !strings.Contains(body, "leaving") {
		t.Errorf("/readyz after leaving = %d %q, want 503 leaving", code, body)
	}
	if code, _ := get(t, base+"/healthz"); code != http.StatusOK {
		t.Errorf("/healthz = %d while the process lives", code)
	}
}

func TestServeAdminFlagMistakes(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--admin", "nonsense"}, "--admin"},
		{[]string{"--admin", "127.0.0.1:99999"}, "--admin"},
		{[]string{"--pprof"}, "--pprof needs --admin"},
		{[]string{"--log-format", "xml"}, "--log-format must be text or json"},
		{[]string{"--log-level", "loud"}, "--log-level must be"},
	} {
		code, _, stderr := runCLI(t, append([]string{"serve", "--cluster", "x", "--peers", ""}, tc.args...)...)
		if code != exitUsage || !strings.Contains(stderr, tc.want) {
			t.Errorf("serve %v: exit %d, stderr %q; want 2 and %q", tc.args, code, stderr, tc.want)
		}
	}
}
