// Command testsummary reads `go test -json` on standard input and prints
// each package's result, the output of failed tests, every skipped test with
// its reason, and a closing "N passed, N failed, N skipped" line. It exits 1
// when a test or a package failed. ./test.sh uses it.
package main

import (
	"fmt"
	"os"

	"github.com/ringactor/ringactor/internal/testutil/testsummary"
)

func main() {
	res, err := testsummary.Summarize(os.Stdin, os.Stdout)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	if res.Failed > 0 || res.PackagesFailed > 0 {
		os.Exit(1)
	}
}
