package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"slices"
	"strings"
	"testing"
)

// checkUsageLines fails t unless stderr is a usage error as usageError
// writes it: one line naming the command and the mistake, then the hint.
func checkUsageLines(t *testing.T, cmd, stderr string) {
	t.Helper()
	lines := strings.Split(stderr, "\n")
	if len(lines) != 3 || lines[2] != "" || !strings.HasPrefix(lines[0], "ringactor "+cmd+": ") ||
		lines[1] != "Run 'ringactor "+cmd+" -h' for usage." {
		t.Fatalf("stderr is not one usage error and its hint: %q", stderr)
	}
}

// FuzzCallData: `ringactor call --data` takes exactly the JSON values,
// whichever way the flag is written (--data V, --data=V, the deprecated
// --json V), keeping the body byte for byte; anything else is a usage error
// (exit status 2) of one line, of bounded length whatever the input, that
// names --data.
func FuzzCallData(f *testing.F) {
	for _, s := range []string{`{}`, `{"a":[1,2],"b":[3,4]}`, `null`, `"x"`, `1e400`, ``, ` `, `{`, `{"a":1}x`, "\xff",
		"{\"a\":\"\n\"}", `-1`, `--x`, `-h`, `=`, strings.Repeat(`[`, 200) + strings.Repeat(`]`, 200), strings.Repeat("é", 100)} {
		f.Add(s)
	}
	base := []string{"--cluster", "c", "--peers", "127.0.0.1:1", "--kind", "echo", "--identity", "x"}
	f.Fuzz(func(t *testing.T, data string) {
		valid := json.Valid([]byte(data))
		for _, form := range [][]string{{"--data", data}, {"--data=" + data}, {"--json", data}} {
			var stderr bytes.Buffer
			c, code, ok := parseCall(append(append([]string(nil), base...), form...), &stderr)
			errText := stderr.String()
			if form[0] == "--json" {
				notice, rest, _ := strings.Cut(errText, "\n")
				if !strings.Contains(notice, "--json for the request body is deprecated") {
					t.Fatalf("--json without its deprecation notice: %q", errText)
				}
				errText = rest
			}
			switch {
			case ok != valid:
				t.Fatalf("%q: accepted %v, but json.Valid says %v (stderr %q)", form, ok, valid, errText)
			case ok && (code != exitOK || c.body != data || errText != ""):
				t.Fatalf("%q: accepted with status %d, body %q, stderr %q", form, code, c.body, errText)
			case !ok:
				if code != exitUsage {
					t.Fatalf("%q: status %d, want %d", form, code, exitUsage)
				}
				checkUsageLines(t, "call", errText)
				if !strings.Contains(errText, "--data must be a JSON value") || len(errText) > 600 {
					t.Fatalf("%q: %d bytes of stderr: %q", form, len(errText), errText)
				}
			}
		}
	})
}

// serveFlagNames are the flags of `ringactor serve`, from its flag set.
func serveFlagNames() []string {
	s, _, _ := parseServe([]string{"-h"}, new(bytes.Buffer), nil)
	var names []string
	s.fs.VisitAll(func(f *flag.Flag) { names = append(names, f.Name) })
	return names
}

// serveValues parses the serve command line args with the environment env
// and returns the outcome and, when it is accepted, every flag's value.
func serveValues(args []string, env map[string]string) (code int, ok bool, stderr string, values map[string]string) {
	var errb bytes.Buffer
	s, code, ok := parseServe(args, &errb, func(k string) (string, bool) { v, set := env[k]; return v, set })
	if ok {
		values = map[string]string{}
		s.fs.VisitAll(func(f *flag.Flag) { values[f.Name] = f.Value.String() })
	}
	return code, ok, errb.String(), values
}

// FuzzServeEnvironment: a serve flag from its RINGACTOR_ variable means what
// the same value on the command line means. Three flags (a name that is not
// one of serve's picks one) get fuzzed values, each on the command line or,
// by its bit of env, in the environment: the outcome (accepted, or the exit
// status), and every flag's value when accepted, are those of all three on
// the command line; a refusal is one usage line, and a value a flag refuses
// from the environment names its variable.
func FuzzServeEnvironment(f *testing.F) {
	names := serveFlagNames()
	f.Add("cluster", "c", "peers", "", "bind", "127.0.0.1:0", uint8(0b111))
	f.Add("cluster", "c", "provider", "etcd", "etcd", "http://127.0.0.1:2379", uint8(0b010))
	f.Add("v", "maybe", "sim-devices", "-1", "log-level", "debug", uint8(0b001))
	f.Add("cluster", "c", "peers", "127.0.0.1:1,", "advertise", "0.0.0.0:7000", uint8(0b100))
	f.Add("cluster", "c", "provider", "k8s", "peers", "x:1", uint8(0b011))
	f.Add("admin", "nonsense", "pprof", "true", "cluster", "c", uint8(0b001))
	f.Add("log-format", "json", "log-level", "warn+1", "tls-ca", "x", uint8(0b110))
	f.Add("sim-devices", "0x10", "bench-kinds", "1", "tls-key", "\n", uint8(0b101))
	f.Fuzz(func(t *testing.T, n1, v1, n2, v2, n3, v3 string, envBits uint8) {
		cmdline := map[string]string{}
		var order []string
		for i, nv := range [][2]string{{n1, v1}, {n2, v2}, {n3, v3}} {
			n := nv[0]
			if !slices.Contains(names, n) {
				n = names[(len(n)+i)%len(names)]
			}
			if _, dup := cmdline[n]; !dup {
				cmdline[n] = nv[1]
				order = append(order, n)
			}
		}
		var argsA, argsB []string
		env := map[string]string{}
		for i, n := range order {
			argsA = append(argsA, "--"+n+"="+cmdline[n])
			if envBits>>i&1 == 1 {
				env[envName(n)] = cmdline[n]
			} else {
				argsB = append(argsB, "--"+n+"="+cmdline[n])
			}
		}
		codeA, okA, errA, valuesA := serveValues(argsA, nil)
		codeB, okB, errB, valuesB := serveValues(argsB, env)
		if okA != okB || codeA != codeB {
			t.Fatalf("command line %q: status %d (%q); command line %q with %q: status %d (%q)",
				argsA, codeA, errA, argsB, env, codeB, errB)
		}
		if okA {
			for n, v := range valuesA {
				if valuesB[n] != v {
					t.Fatalf("--%s is %q from the command line %q, %q from %q with %q", n, v, argsA, valuesB[n], argsB, env)
				}
			}
			return
		}
		if codeA != exitUsage {
			t.Fatalf("refused with status %d, want %d: %q", codeA, exitUsage, errA)
		}
		checkUsageLines(t, "serve", errA)
		checkUsageLines(t, "serve", errB)
		if strings.Contains(errA, "invalid value") && !strings.Contains(errB, "invalid value") {
			// The command line's bad value came from the environment in B.
			named := false
			for k := range env {
				named = named || strings.Contains(errB, k+"=")
			}
			if !named {
				t.Fatalf("a refused value from the environment %q does not name its variable: %q", env, errB)
			}
		}
	})
}
