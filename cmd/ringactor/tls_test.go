package main

import (
	"bytes"
	"os/exec"
	"strings"
	"testing"

	"github.com/ringactor/ringactor/internal/testutil/testcerts"
)

// tlsFlags has ca issue a certificate named name and returns the --tls-*
// flags that use it.
func tlsFlags(t *testing.T, name string, ca *testcerts.CA) []string {
	t.Helper()
	caFile, certFile, keyFile := ca.Files(t, ca.Issue(t, name))
	return []string{"--tls-ca", caFile, "--tls-cert", certFile, "--tls-key", keyFile}
}

// TestServeCallTLSRefused: against a member with mutual TLS, a call with
// the cluster's certificates is answered, and a call or a member with a
// certificate from another CA, or without TLS, fails with one line naming
// the refused handshake and its reason, exit status 1 — not after its
// timeout, and a refused member does not announce itself.
func TestServeCallTLSRefused(t *testing.T) {
	ca, other := testcerts.NewCA(t, "cluster CA"), testcerts.NewCA(t, "another CA")
	good := tlsFlags(t, "good", ca)
	a := startServe(t, append([]string{"--cluster", "tlscli", "--peers", ""}, good...)...)
	base := []string{"--cluster", "tlscli", "--peers", a, "--kind", "echo", "--identity", "x", "--data", `{"n":1}`, "--timeout", "60s"}

	if out, errs, code := call(t, append(base, tlsFlags(t, "client", ca)...)...); code != 0 || strings.TrimSpace(out) != `{"n":1}` {
		t.Fatalf("call with the cluster's CA: exit %d, stdout %q, stderr %s", code, out, errs)
	}
	intruder := tlsFlags(t, "intruder", other)
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
