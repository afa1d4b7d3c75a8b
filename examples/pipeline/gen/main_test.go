package main

import (
	"bytes"
	"strings"
	"testing"
)

// TestCommandLine: a bad value is one plain line and a hint (exit 2), not
// a Go struct; -h exits 0.
func TestCommandLine(t *testing.T) {
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"-rows", "-3"}, 2, "gen: rows -3, want at least 0\nRun 'gen -h' for usage.\n"},
		{[]string{"-sensors", "0"}, 2, "gen: sensors 0, want at least 1\n"},
		{[]string{"extra"}, 2, "gen: unexpected argument \"extra\"\n"},
		{[]string{"-h"}, 0, "Usage: gen [flags]"},
	} {
		var stdout, stderr bytes.Buffer
		code := run(tc.args, &stdout, &stderr)
		if code != tc.code || !strings.HasPrefix(stderr.String(), tc.want) || stdout.Len() != 0 {
			t.Errorf("%q: exit %d, stdout %q, stderr %q; want %d, %q", tc.args, code, stdout.String(), stderr.String(), tc.code, tc.want)
		}
	}
	var stdout, stderr bytes.Buffer
	if code := run([]string{"-rows", "2", "-bad-every", "0", "-header"}, &stdout, &stderr); code != 0 || strings.Count(stdout.String(), "\n") != 3 {
		t.Errorf("a run: exit %d, stdout %q, stderr %q", code, stdout.String(), stderr.String())
	}
}
