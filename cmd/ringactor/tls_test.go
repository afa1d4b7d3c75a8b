package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ringactor/ringactor/internal/testutil/testcerts"
)

// tlsFlags writes a CA's certificate and one it issued to dir and returns
// the --tls-* flags that use them.
func tlsFlags(t *testing.T, dir, name string, ca *testcerts.CA) []string {
	t.Helper()
	cert := ca.Issue(t, name)
	files := map[string][]byte{name + "-ca.pem": ca.PEM, name + ".pem": cert.CertPEM, name + ".key": cert.KeyPEM}
	for f, b := range files {
		if err := os.WriteFile(filepath.Join(dir, f), b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return []string{"--tls-ca", filepath.Join(dir, name+"-ca.pem"), "--tls-cert", filepath.Join(dir, name+".pem"), "--tls-key", filepath.Join(dir, name+".key")}
}

// TestServeCallTLSRefused: against a member with mutual TLS, a call with
// the cluster's certificates is answered, and a call or a member with a
// certificate from another CA, or without TLS, fails with one line naming
// the refused handshake and its reason, exit status 1 — not after its
// timeout, and a refused member does not announce itself.
func TestServeCallTLSRefused(t *testing.T) {
	dir := t.TempDir()
	ca, other := testcerts.NewCA(t, "cluster CA"), testcerts.NewCA(t, "another CA")
	good := tlsFlags(t, dir, "good", ca)
	a := startServe(t, append([]string{"--cluster", "tlscli", "--peers", ""}, good...)...)
	base := []string{"--cluster", "tlscli", "--peers", a, "--kind", "echo", "--identity", "x", "--data", `{"n":1}`, "--timeout", "60s"}

	if out, errs, code := call(t, append(base, tlsFlags(t, dir, "client", ca)...)...); code != 0 || strings.TrimSpace(out) != `{"n":1}` {
		t.Fatalf("call with the cluster's CA: exit %d, stdout %q, stderr %s", code, out, errs)
	}
	intruder := tlsFlags(t, dir, "intruder", other)
	for _, c := range []struct {
		name   string
		flags  []string
		reason string
	}{
		{"OtherCA", intruder, "unknown authority"},
		{"Plaintext", nil, "not TLS"},
	} {
		t.Run("Call"+c.name, func(t *testing.T) {
			_, errs, code := call(t, append(base, c.flags...)...)
			checkTLSRefusal(t, "call", code, errs, a, c.reason)
		})
	}
	t.Run("ServeOtherCA", func(t *testing.T) {
		cmd := commandProcess(t, append([]string{"serve", "--cluster", "tlscli", "--peers", a}, intruder...)...)
		var out, errb bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errb
		code := 0
		if err := cmd.Run(); err != nil {
			ee, ok := err.(*exec.ExitError)
			if !ok {
				t.Fatal(err)
			}
			code = ee.ExitCode()
		}
		if strings.Contains(out.String(), "member ") {
			t.Errorf("a refused member announced itself: stdout %q", out.String())
		}
		checkTLSRefusal(t, "serve", code, lastLine(errb.String()), a, "unknown authority")
	})
}

// checkTLSRefusal checks that a command failed with exit status 1 and a
// one-line error naming a refused TLS handshake with peer for reason.
func checkTLSRefusal(t *testing.T, cmd string, code int, stderr, peer, reason string) {
	t.Helper()
	line := strings.TrimSpace(stderr)
	if code != exitFailure || strings.Contains(line, "\n") || !strings.HasPrefix(line, "ringactor "+cmd+": ") ||
		!strings.Contains(line, "TLS handshake with "+peer+" refused: "+reason) || strings.Contains(line, "timed out") {
		t.Fatalf("%s: exit %d, stderr %q; want exit %d and one line naming the refused handshake with %s (%s)", cmd, code, stderr, exitFailure, peer, reason)
	}
}

// lastLine returns the last non-empty line of s.
func lastLine(s string) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	return lines[len(lines)-1]
}
