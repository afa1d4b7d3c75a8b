package main

import (
	"os"
	"strings"
	"testing"
)

// TestServeEnvironment: every serve flag can come from a RINGACTOR_
// variable, a flag on the command line wins, a bad value names its
// variable, and serve -h lists the variables.
func TestServeEnvironment(t *testing.T) {
	t.Setenv("POD_NAMESPACE", "")
	for _, c := range []struct {
		env  map[string]string
		args []string
		code int
		want string
	}{
		// From the environment: the provider is checked like the flag.
		{map[string]string{"RINGACTOR_CLUSTER": "c", "RINGACTOR_PROVIDER": "bogus"}, nil, exitUsage, `--provider "bogus": want peers, etcd or k8s`},
		// A value the flag refuses names the variable.
		{map[string]string{"RINGACTOR_V": "maybe"}, nil, exitUsage, `RINGACTOR_V="maybe"`},
		// The command line wins: RINGACTOR_V is not read, and the next
		// mistake is the missing cluster name.
		{map[string]string{"RINGACTOR_V": "maybe"}, []string{"-v"}, exitUsage, "--cluster is required"},
		{map[string]string{"RINGACTOR_CLUSTER": "c", "RINGACTOR_PEERS": "", "RINGACTOR_BIND": "nonsense"}, nil, exitUsage, `--bind: "nonsense" is not HOST:PORT`},
		{map[string]string{"RINGACTOR_CLUSTER": "c", "RINGACTOR_PEERS": "", "RINGACTOR_BIND": "nonsense"}, []string{"--bind", "x"}, exitUsage, `--bind: "x" is not HOST:PORT`},
		// The Kubernetes provider outside a pod: a failure that says why.
		{map[string]string{"RINGACTOR_CLUSTER": "c", "RINGACTOR_PROVIDER": "k8s"}, nil, exitFailure, "no namespace"},
		{map[string]string{"RINGACTOR_CLUSTER": "c", "RINGACTOR_PROVIDER": "k8s", "RINGACTOR_PEERS": "127.0.0.1:1"}, nil, exitUsage, "--provider k8s takes neither --peers nor --etcd"},
		// The state store URL, from the flag or its variable.
		{map[string]string{"RINGACTOR_CLUSTER": "c", "RINGACTOR_PEERS": "", "RINGACTOR_STATE_STORE": "redis://x"}, nil, exitUsage, `--state-store: "redis://x": want file:///path or postgres://`},
		{map[string]string{"RINGACTOR_CLUSTER": "c", "RINGACTOR_PEERS": ""}, []string{"--state-store", "file://relative.db"}, exitUsage, "want file:///absolute/path"},
	} {
		for k, v := range c.env {
			t.Setenv(k, v)
		}
		code, _, stderr := runCLI(t, append([]string{"serve"}, c.args...)...)
		if code != c.code || !strings.Contains(stderr, c.want) {
			t.Errorf("%v serve %v: status %d, stderr %q; want %d and %q", c.env, c.args, code, stderr, c.code, c.want)
		}
		for k := range c.env {
			t.Setenv(k, "")
			unsetenv(t, k)
		}
	}
	code, _, stderr := runCLI(t, "serve", "-h")
	if code != exitOK {
		t.Fatalf("serve -h: %d", code)
	}
	for _, v := range []string{"RINGACTOR_CLUSTER", "RINGACTOR_PEERS", "RINGACTOR_ETCD", "RINGACTOR_PROVIDER", "RINGACTOR_BIND",
		"RINGACTOR_ADVERTISE", "RINGACTOR_ADMIN", "RINGACTOR_LOG_LEVEL", "RINGACTOR_LOG_FORMAT", "RINGACTOR_TLS_CA"} {
		if !strings.Contains(stderr, "\n  "+v+"\n") {
			t.Errorf("serve -h does not list %s:\n%s", v, stderr)
		}
	}
}

// unsetenv removes k from the environment for the rest of the test (after
// t.Setenv, which restores it at the end).
func unsetenv(t *testing.T, k string) {
	t.Helper()
	if err := os.Unsetenv(k); err != nil {
		t.Fatal(err)
	}
}
