package multiproc

import (
	"bytes"
	"fmt"
	"net"
	"net/http"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/ringactor/ringactor/internal/testproc"
)

// freeLoopbackPort returns a loopback TCP port that was free a moment ago.
func freeLoopbackPort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// startEtcd starts a single-node etcd on loopback ports with its data in a
// temporary directory, waits until it reports healthy, and returns its
// client endpoint (host:port). It is killed at the end of the test. The
// test fails when there is no etcd binary (.ci/run installs etcd-server).
func startEtcd(t *testing.T) string {
	t.Helper()
	bin, err := exec.LookPath("etcd")
	if err != nil {
		t.Fatalf("etcd not found in PATH (Debian: apt-get install etcd-server): %v", err)
	}
	client := fmt.Sprintf("127.0.0.1:%d", freeLoopbackPort(t))
	peer := fmt.Sprintf("http://127.0.0.1:%d", freeLoopbackPort(t))
	cmd := exec.Command(bin,
		"--name", "ringactor-multiproc",
		"--data-dir", t.TempDir(),
		"--listen-client-urls", "http://"+client,
		"--advertise-client-urls", "http://"+client,
		"--listen-peer-urls", peer,
		"--initial-advertise-peer-urls", peer,
		"--initial-cluster", "ringactor-multiproc="+peer,
		"--log-level", "warn",
	)
	var out testproc.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting etcd: %v", err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-exited
	})
	deadline := time.Now().Add(15 * time.Second)
	hc := &http.Client{Timeout: time.Second}
	for {
		resp, err := hc.Get("http://" + client + "/health")
		if err == nil {
			body := new(bytes.Buffer)
			_, _ = body.ReadFrom(resp.Body)
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK && strings.Contains(body.String(), `"health":"true"`) {
				return client
			}
		}
		select {
		case err := <-exited:
			t.Fatalf("etcd exited: %v\n%s", err, out.String())
		case <-time.After(50 * time.Millisecond): // polling etcd's health endpoint
		}
		if time.Now().After(deadline) {
			t.Fatalf("etcd not healthy after 15s (last error %v)\n%s", err, out.String())
		}
	}
}
