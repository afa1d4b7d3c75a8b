package main

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/ringactor/ringactor/internal/testutil/testproc"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m, testproc.ProtoActorThrottles()...)
}

// TestCommandLine: the example follows ringactor's command-line rules:
// -h exits 0, a bad command line is one line and a hint (exit 2), a
// failure one line (exit 1) naming the program once.
func TestCommandLine(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	missing := filepath.Join(t.TempDir(), "nofile.edges")
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"-h"}, 0, "Usage: pagerank [-top K] [FILE]"},
		{[]string{"-top", "-1"}, 2, "pagerank: -top must be at least 0, got -1\nRun 'pagerank -h' for usage.\n"},
		{[]string{"a", "b"}, 2, "pagerank: want at most one FILE, got [\"a\" \"b\"]\n"},
		{[]string{missing}, 1, "pagerank: open " + missing + ": no such file or directory\n"},
	} {
		var stdout, stderr bytes.Buffer
		code := cli(ctx, tc.args, &stdout, &stderr)
		if code != tc.code || !strings.HasPrefix(stderr.String(), tc.want) {
			t.Errorf("%q: exit %d, stderr %q; want %d, %q", tc.args, code, stderr.String(), tc.code, tc.want)
		}
	}
	var stdout, stderr bytes.Buffer
	if code := cli(ctx, []string{"-top", "1"}, &stdout, &stderr); code != 0 || !strings.Contains(stdout.String(), "# converged after") {
		t.Errorf("a run: exit %d, stdout %q, stderr %q", code, stdout.String(), stderr.String())
	}
}
