package testproc

import (
	"bytes"
	"fmt"
	"net"
	"net/http"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// FreeLoopbackPort returns a loopback TCP port that was free a moment ago.
func FreeLoopbackPort(t testing.TB) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// HaveEtcd reports whether an etcd binary is on PATH (.ci/run installs
// Debian's etcd-server).
func HaveEtcd() bool {
	_, err := exec.LookPath("etcd")
	return err == nil
}

// StartEtcd starts a single-node etcd named name on loopback ports with its
// data in a temporary directory, waits until it reports healthy, and
// returns its client endpoint (host:port). It is killed at the end of the
// test. The test fails when there is no etcd binary (see HaveEtcd).
func StartEtcd(t testing.TB, name string) string {
	t.Helper()
	bin, err := exec.LookPath("etcd")
	if err != nil {
		t.Fatalf("etcd not found in PATH (Debian: apt-get install etcd-server): %v", err)
	}
	client := fmt.Sprintf("127.0.0.1:%d", FreeLoopbackPort(t))
	peer := fmt.Sprintf("http://127.0.0.1:%d", FreeLoopbackPort(t))
	cmd := exec.Command(bin,
		"--name", name,
		"--data-dir", t.TempDir(),
		"--listen-client-urls", "http://"+client,
		"--advertise-client-urls", "http://"+client,
		"--listen-peer-urls", peer,
		"--initial-advertise-peer-urls", peer,
		"--initial-cluster", name+"="+peer,
		"--log-level", "warn",
	)
	var out Buffer
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
