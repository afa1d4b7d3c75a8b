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
