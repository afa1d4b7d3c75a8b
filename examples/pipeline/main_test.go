package main

import (
	"bytes"
	"context"
	"os"
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

// TestCommandLine: the example follows ringactor's command-line rules,
// `ringactor pipeline`'s exit status included: a run whose every row was
// rejected exits 1.
func TestCommandLine(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	dir := t.TempDir()
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	bad, good := write("bad.csv", "a,1,x\nb,2,y\n"), write("good.csv", "a,1,2\n")
	for _, tc := range []struct {
		args         []string
		code         int
		stdout, want string
	}{
		{[]string{"-h"}, 0, "", "Usage: pipeline [flags] [FILE | -]"},
		{[]string{"-window-ms", "0", good}, 2, "", "pipeline: window"},
		{[]string{good, good}, 2, "", "pipeline: want at most one FILE"},
		{[]string{bad}, 1, "sensor,window_start_ms,count,min,max,mean\n",
			"line 1: value \"x\" is not a finite number\nline 2: value \"y\" is not a finite number\nrejected 2 rows\n" +
				"pipeline: every row was rejected (2 of 2)\n"},
		{[]string{good}, 0, "sensor,window_start_ms,count,min,max,mean\na,0,1,2,2,2\n", ""},
	} {
		var stdout, stderr bytes.Buffer
		code := run(ctx, tc.args, &stdout, &stderr)
		if code != tc.code || (tc.want == "" && stderr.Len() != 0) || !strings.HasPrefix(stderr.String(), tc.want) ||
			(tc.stdout != "" && stdout.String() != tc.stdout) {
			t.Errorf("%q: exit %d, stdout %q, stderr %q; want %d, %q, %q", tc.args, code, stdout.String(), stderr.String(), tc.code, tc.stdout, tc.want)
		}
	}
}
