package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// pipelineInput is the pipeline command tests' CSV: CRLF lines, a header, a
// blank line, a bad row, a non-ASCII sensor and an event that is late with
// --lateness-ms 0.
const pipelineInput = "sensor,ts_ms,value\r\n" +
	"センサー,-1,1.5\r\n" +
	"b,250,2\r\n" +
	"\r\n" +
	"センサー,999,x\r\n" +
	"センサー,20,0.5\r\n" +
	"b,1999,-3\r\n" +
	"センサー,-500,7\r\n"

// runPipeline runs the pipeline command with args and returns its status,
// stdout and stderr.
func runPipeline(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	code := runPipelineCommand(testCtx(t), args, &stdout, &stderr)
	return code, stdout.String(), stderr.String()
}

// writeInput writes the test input to a file and returns its name.
func writeInput(t *testing.T) string {
	t.Helper()
	name := filepath.Join(t.TempDir(), "in.csv")
	if err := os.WriteFile(name, []byte(pipelineInput), 0o600); err != nil {
		t.Fatal(err)
	}
	return name
}

// TestPipelineCommand runs the command on a file, with flags before and
// after it, with and without lateness, and on stdin.
func TestPipelineCommand(t *testing.T) {
	file := writeInput(t)
	const header = "sensor,window_start_ms,count,min,max,mean\n"
	hold := header +
		"b,0,1,5,5,5\n" +
		"b,1000,1,-5,-5,-5\n" +
		"センサー,-1000,2,4,15,9.5\n" +
		"センサー,0,1,2,2,2\n"
	holdErr := "line 5: value \"x\" is not a finite number\nrejected 1 row\n"
	late := header +
		"センサー,-1000,1,4,4,4\n" +
		"b,0,1,5,5,5\n" +
		"センサー,0,1,2,2,2\n" +
		"b,1000,1,-5,-5,-5\n"
	lateErr := "line 5: value \"x\" is not a finite number\n" +
		"line 8: late event for window -1000 of sensor \"センサー\": newest timestamp 1999 ≥ window end 0 + lateness 0\n" +
		"rejected 2 rows\n"
	for _, tc := range []struct {
		name          string
		args          []string
		stdin         string
		stdout, stder string
	}{
		{"flags before FILE", []string{"--scale", "2", "-offset=1", file}, "", hold, holdErr},
		{"flags after FILE", []string{file, "--scale=2", "--offset", "1", "--window-ms", "1000"}, "", hold, holdErr},
		{"lateness", []string{"--lateness-ms", "0", "--scale", "2", "--offset", "1", file}, "", late, lateErr},
		{"stdin -", []string{"--scale", "2", "--offset", "1", "-"}, pipelineInput, hold, holdErr},
		{"stdin", []string{"--scale", "2", "--offset", "1"}, pipelineInput, hold, holdErr},
		{"-- FILE", []string{"--scale", "2", "--offset", "1", "--", file}, "", hold, holdErr},
		{"empty", []string{"-"}, "", header, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			old := pipelineStdin
			pipelineStdin = strings.NewReader(tc.stdin)
			defer func() { pipelineStdin = old }()
			code, stdout, stderr := runPipeline(t, tc.args...)
			if code != exitOK || stdout != tc.stdout || stderr != tc.stder {
				t.Errorf("status %d\nstdout:\n%s\nwant:\n%s\nstderr:\n%s\nwant:\n%s", code, stdout, tc.stdout, stderr, tc.stder)
			}
		})
	}
}

// TestPipelineCommandErrors checks the exit statuses: 0 for help, 2 for a
// bad command line, 1 for a file that cannot be read.
func TestPipelineCommandErrors(t *testing.T) {
	file := writeInput(t)
	for _, tc := range []struct {
		args []string
		code int
		want string // in stderr
	}{
		{[]string{"-h"}, exitOK, "Usage: ringactor pipeline [--window-ms W]"},
		{[]string{"--window-ms", "0", file}, exitUsage, "window 0 ms, want at least 1"},
		{[]string{"--lateness-ms", "-1", file}, exitUsage, "lateness -1 ms, want at least 0"},
		{[]string{"--scale", "NaN", file}, exitUsage, "scale NaN, want a finite number"},
		{[]string{"--offset", "x", file}, exitUsage, "invalid value"},
		{[]string{"--nope", file}, exitUsage, "flag provided but not defined"},
		{[]string{file, file}, exitUsage, "want at most one FILE"},
		{[]string{filepath.Join(t.TempDir(), "missing.csv")}, exitFailure, "no such file"},
	} {
		code, stdout, stderr := runPipeline(t, tc.args...)
		if code != tc.code || !strings.Contains(stderr, tc.want) || (code != exitOK && stdout != "") {
			t.Errorf("%q: status %d (want %d), stdout %q, stderr:\n%s\nwant it to contain %q", tc.args, code, tc.code, stdout, stderr, tc.want)
		}
	}
}

// TestPipelineRejects checks --max-rejects (the default -1 allows any
// number, N stops at the first rejected row beyond N with exit status 1),
// the exit status 1 when every row is rejected, quoted CSV, a leading byte
// order mark and the truncation of a long value in a reject's reason.
func TestPipelineRejects(t *testing.T) {
	const bad = "a,1,x\nb\nc,2,y\n"
	for _, tc := range []struct {
		name  string
		args  []string
		stdin string
		code  int
		out   string // stdout, exactly
		err   string // the end of stderr
	}{
		{"default: any number", []string{"-"}, "\uFEFFs,1,1\n" + bad, exitOK,
			"sensor,window_start_ms,count,min,max,mean\ns,0,1,1,1,1\n", "rejected 3 rows\n"},
		{"within the limit", []string{"--max-rejects", "3", "-"}, "s,1,1\n" + bad, exitOK,
			"sensor,window_start_ms,count,min,max,mean\ns,0,1,1,1,1\n", "rejected 3 rows\n"},
		{"beyond the limit", []string{"--max-rejects", "1", "-"}, "s,1,1\n" + bad, exitFailure, "",
			"line 2: value \"x\" is not a finite number\nline 3: want 3 fields (sensor,ts_ms,value), got 1\n" +
				"ringactor pipeline: stopped: more than 1 rows rejected (--max-rejects 1)\n"},
		{"none allowed", []string{"--max-rejects", "0", "-"}, "s,1,1\n" + bad, exitFailure, "",
			"line 2: value \"x\" is not a finite number\nringactor pipeline: stopped: more than 0 rows rejected (--max-rejects 0)\n"},
		{"every row rejected", []string{"-"}, bad, exitFailure, "sensor,window_start_ms,count,min,max,mean\n",
			"rejected 3 rows\nringactor pipeline: every row was rejected (3 rows)\n"},
		{"quoted", []string{"-"}, "\"sensor\",\"ts_ms\",\"value\"\n\"a,b\",1,\"2\"\n\"say \"\"hi\"\"\",1,3\n", exitOK,
			"sensor,window_start_ms,count,min,max,mean\n\"a,b\",0,1,2,2,2\n\"say \"\"hi\"\"\",0,1,3,3,3\n", ""},
		{"long value", []string{"-"}, "s,1,1\ns,2," + strings.Repeat("v", 500) + "\n", exitOK,
			"sensor,window_start_ms,count,min,max,mean\ns,0,1,1,1,1\n",
			"line 2: value \"" + strings.Repeat("v", 80) + "\"… is not a finite number\nrejected 1 row\n"},
		// An overflowing result is a bad row, as an overflowing input is.
		{"scaled overflow", []string{"--scale", "10", "-"}, "s,1,1\ns,2,1e308\ns,3,-1e308\ns,4,1e999\n", exitOK,
			"sensor,window_start_ms,count,min,max,mean\ns,0,1,10,10,10\n",
			"line 2: value 1e+308 × scale 10 + offset 0 overflows float64 (+Inf)\n" +
				"line 3: value -1e+308 × scale 10 + offset 0 overflows float64 (-Inf)\n" +
				"line 4: value \"1e999\" is not a finite number\nrejected 3 rows\n"},
		{"every scaled value overflows", []string{"--scale", "10", "-"}, "s,1,1e308\n", exitFailure,
			"sensor,window_start_ms,count,min,max,mean\n",
			"line 1: value 1e+308 × scale 10 + offset 0 overflows float64 (+Inf)\nrejected 1 row\n" +
				"ringactor pipeline: every row was rejected (1 row)\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			old := pipelineStdin
			pipelineStdin = strings.NewReader(tc.stdin)
			defer func() { pipelineStdin = old }()
			code, stdout, stderr := runPipeline(t, tc.args...)
			if code != tc.code || stdout != tc.out || !strings.HasSuffix(stderr, tc.err) {
				t.Errorf("status %d (want %d)\nstdout:\n%s\nwant:\n%s\nstderr:\n%s\nwant it to end in:\n%s", code, tc.code, stdout, tc.out, stderr, tc.err)
			}
		})
	}
	code, _, stderr := runPipeline(t, "--max-rejects", "-2", "-")
	if code != exitUsage {
		t.Errorf("--max-rejects -2: exit %d, stderr %q", code, stderr)
	}
	checkUsageLine(t, []string{"--max-rejects", "-2"}, "pipeline", stderr)
}

// TestCallData checks call's body flags: --data, and --json, its deprecated
// alias, which prints a one-line notice; both at once, or an invalid body,
// are usage mistakes.
func TestCallData(t *testing.T) {
	base := []string{"--cluster", "c", "--peers", "127.0.0.1:1", "--kind", "k", "--identity", "i"}
	var errb bytes.Buffer
	c, code, ok := parseCall(append(base, "--data", `{"a":1}`), &errb)
	if !ok || c.body != `{"a":1}` || errb.Len() != 0 {
		t.Errorf("--data: ok %v (exit %d), body %q, stderr %q", ok, code, c.body, errb.String())
	}
	errb.Reset()
	c, code, ok = parseCall(append(base, "--json", `[1]`), &errb)
	const notice = "ringactor call: --json for the request body is deprecated and will be removed; use --data\n"
	if !ok || c.body != `[1]` || errb.String() != notice {
		t.Errorf("--json: ok %v (exit %d), body %q, stderr %q", ok, code, c.body, errb.String())
	}
	for _, args := range [][]string{
		append(base, "--data", "{}", "--json", "{}"),
		append(base, "--data", "{nope"),
		base,
	} {
		errb.Reset()
		_, code, ok := parseCall(args, &errb)
		msg := strings.TrimPrefix(errb.String(), notice)
		if ok || code != exitUsage {
			t.Errorf("%q: ok %v, exit %d", args, ok, code)
		}
		checkUsageLine(t, args, "call", msg)
		if !strings.Contains(msg, "--data") {
			t.Errorf("%q: the message does not name --data: %q", args, msg)
		}
	}
}
