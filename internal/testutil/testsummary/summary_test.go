package testsummary

import (
	"bytes"
	"strings"
	"testing"
)

const stream = `{"Action":"start","Package":"p/a"}
{"Action":"run","Package":"p/a","Test":"TestOK"}
{"Action":"output","Package":"p/a","Test":"TestOK","Output":"=== RUN   TestOK\n"}
{"Action":"output","Package":"p/a","Test":"TestOK","Output":"--- PASS: TestOK (0.00s)\n"}
{"Action":"pass","Package":"p/a","Test":"TestOK"}
{"Action":"run","Package":"p/a","Test":"TestSkip"}
{"Action":"output","Package":"p/a","Test":"TestSkip","Output":"=== RUN   TestSkip\n"}
{"Action":"output","Package":"p/a","Test":"TestSkip","Output":"    a_test.go:9: etcd not found in PATH\n"}
{"Action":"output","Package":"p/a","Test":"TestSkip","Output":"--- SKIP: TestSkip (0.00s)\n"}
{"Action":"skip","Package":"p/a","Test":"TestSkip"}
{"Action":"run","Package":"p/a","Test":"TestBad"}
{"Action":"output","Package":"p/a","Test":"TestBad","Output":"=== RUN   TestBad\n"}
{"Action":"output","Package":"p/a","Test":"TestBad","Output":"    a_test.go:12: want 1, got 2\n"}
{"Action":"output","Package":"p/a","Test":"TestBad","Output":"--- FAIL: TestBad (0.00s)\n"}
{"Action":"fail","Package":"p/a","Test":"TestBad"}
{"Action":"output","Package":"p/a","Output":"FAIL\n"}
{"Action":"output","Package":"p/a","Output":"FAIL\tp/a\t0.01s\n"}
{"Action":"fail","Package":"p/a"}
{"ImportPath":"p/b","Action":"build-output","Output":"b.go:3:1: syntax error\n"}
not json from stderr
`

func TestSummarize(t *testing.T) {
	var out bytes.Buffer
	res, err := Summarize(strings.NewReader(stream), &out)
	if err != nil {
		t.Fatal(err)
	}
	if res.Passed != 1 || res.Failed != 1 || res.Skipped != 1 || res.PackagesFailed != 1 {
		t.Fatalf("counts: %+v", res)
	}
	if len(res.Skips) != 1 || res.Skips[0].Reason != "a_test.go:9: etcd not found in PATH" {
		t.Fatalf("skip reason: %+v", res.Skips)
	}
	got := out.String()
	for _, want := range []string{
		"a_test.go:12: want 1, got 2", // a failed test's output
		"FAIL\tp/a\t0.01s",            // the package result
		"b.go:3:1: syntax error",      // a build error
		"not json from stderr",        // passed through
		"p/a TestSkip: a_test.go:9: etcd not found in PATH",
		"1 passed, 1 failed, 1 skipped\n",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("report lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "TestOK") {
		t.Errorf("a passing test's output was printed:\n%s", got)
	}
}

// A test binary that hits -timeout ends without a fail event for the test
// that was running: the report names it, prints its panic and counts it.
func TestSummarizeUnfinished(t *testing.T) {
	var b strings.Builder
	b.WriteString(`{"Action":"run","Package":"p/c","Test":"TestHangs"}` + "\n")
	b.WriteString(`{"Action":"output","Package":"p/c","Test":"TestHangs","Output":"=== RUN   TestHangs\n"}` + "\n")
	b.WriteString(`{"Action":"output","Package":"p/c","Test":"TestHangs","Output":"panic: test timed out after 10m0s\n"}` + "\n")
	for range 500 {
		b.WriteString(`{"Action":"output","Package":"p/c","Test":"TestHangs","Output":"goroutine 7 [chan receive]:\n"}` + "\n")
	}
	b.WriteString(`{"Action":"output","Package":"p/c","Output":"FAIL\tp/c\t600.01s\n"}` + "\n")
	b.WriteString(`{"Action":"fail","Package":"p/c"}` + "\n")
	var out bytes.Buffer
	res, err := Summarize(strings.NewReader(b.String()), &out)
	if err != nil {
		t.Fatal(err)
	}
	if res.Failed != 1 || len(res.Unfinished) != 1 || res.Unfinished[0] != "p/c TestHangs" {
		t.Fatalf("result %+v: want TestHangs counted as failed and unfinished", res)
	}
	got := out.String()
	for _, want := range []string{"--- UNFINISHED: TestHangs (p/c)", "panic: test timed out after 10m0s", "more lines)", "unfinished (1)", "0 passed, 1 failed, 0 skipped"} {
		if !strings.Contains(got, want) {
			t.Errorf("report lacks %q", want)
		}
	}
	if n := strings.Count(got, "goroutine 7"); n >= 500 {
		t.Errorf("the goroutine dump was printed whole (%d lines)", n)
	}
}
