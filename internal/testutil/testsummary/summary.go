// Package testsummary turns the event stream of `go test -json` into what a
// person reads: each package's result line, the full output of every test that
// failed, build errors, and at the end every skipped test with its reason and
// one closing count line. ./test.sh pipes the suite through it, so a skipped
// test says why without -v.
package testsummary

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strings"
)

// Event is one record of `go test -json` (cmd/test2json's TestEvent).
type Event struct {
	Action  string
	Package string
	Test    string
	Output  string
	// ImportPath names the package of a build-output event.
	ImportPath string
}

// Skip is a skipped test and the reason it printed.
type Skip struct {
	Package, Test, Reason string
}

// Result is what a run amounted to.
type Result struct {
	Passed, Failed, Skipped int
	Skips                   []Skip
	// Unfinished names ("package Test") the tests that were running when
	// their test binary ended (a panic, go test's -timeout); each counts as
	// failed.
	Unfinished []string
	// PackagesFailed counts packages whose result was FAIL (a build error or
	// a failing test).
	PackagesFailed int
}

// Summarize reads `go test -json` events from r and writes the readable
// report to w. Lines of r that are not JSON (go test's own stderr when it
// is merged) are copied through unchanged.
func Summarize(r io.Reader, w io.Writer) (Result, error) {
	var res Result
	type key struct{ pkg, test string }
	output := map[key][]string{}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64*1024), 16*1024*1024)
	for sc.Scan() {
		line := sc.Bytes()
		var ev Event
		if len(line) == 0 || line[0] != '{' || json.Unmarshal(line, &ev) != nil {
			fmt.Fprintf(w, "%s\n", line)
			continue
		}
		k := key{ev.Package, ev.Test}
		switch ev.Action {
		case "build-output":
			fmt.Fprint(w, ev.Output)
		case "output":
			if ev.Test == "" {
				// Package-level lines: results, panics outside a test, build
				// failures reported by the test binary.
				out := ev.Output
				if !strings.HasPrefix(out, "=== ") && !strings.HasPrefix(out, "PASS\n") && !strings.HasPrefix(out, "--- ") {
					fmt.Fprint(w, out)
				}
				continue
			}
			output[k] = append(output[k], ev.Output)
		case "pass":
			if ev.Test != "" {
				res.Passed++
				delete(output, k)
			}
		case "fail":
			if ev.Test == "" {
				res.PackagesFailed++
				// Tests of a failed package that never ended: the binary
				// panicked or hit -timeout while they ran. Their output
				// holds the panic; a goroutine dump is cut to its start.
				var open []string
				for k := range output {
					if k.pkg == ev.Package {
						open = append(open, k.test)
					}
				}
				sort.Strings(open)
				for _, name := range open {
					k := key{ev.Package, name}
					res.Failed++
					res.Unfinished = append(res.Unfinished, ev.Package+" "+name)
					fmt.Fprintf(w, "--- UNFINISHED: %s (%s): the test binary ended while it ran\n", name, ev.Package)
					writeCut(w, output[k], unfinishedLines)
					delete(output, k)
				}
				continue
			}
			res.Failed++
			for _, l := range output[k] {
				fmt.Fprint(w, l)
			}
			delete(output, k)
		case "skip":
			if ev.Test == "" {
				continue
			}
			res.Skipped++
			res.Skips = append(res.Skips, Skip{ev.Package, ev.Test, skipReason(output[k])})
			delete(output, k)
		}
	}
	if err := sc.Err(); err != nil {
		return res, fmt.Errorf("testsummary: reading go test -json: %w", err)
	}
	if len(res.Skips) > 0 {
		sort.Slice(res.Skips, func(i, j int) bool {
			a, b := res.Skips[i], res.Skips[j]
			if a.Package != b.Package {
				return a.Package < b.Package
			}
			return a.Test < b.Test
		})
		fmt.Fprintf(w, "\nskipped (%d):\n", len(res.Skips))
		for _, s := range res.Skips {
			fmt.Fprintf(w, "  %s %s: %s\n", s.Package, s.Test, s.Reason)
		}
	}
	if len(res.Unfinished) > 0 {
		fmt.Fprintf(w, "\nunfinished (%d): panicked or ran past go test's -timeout:\n", len(res.Unfinished))
		for _, u := range res.Unfinished {
			fmt.Fprintf(w, "  %s\n", u)
		}
	}
	fmt.Fprintf(w, "%d passed, %d failed, %d skipped\n", res.Passed, res.Failed, res.Skipped)
	return res, nil
}

// skipReason extracts what a skipped test printed (its t.Skip message and
// any logs), joined into one line.
func skipReason(lines []string) string {
	var reason []string
	for _, l := range lines {
		t := strings.TrimSpace(l)
		if t == "" || strings.HasPrefix(t, "=== ") || strings.HasPrefix(t, "--- ") {
			continue
		}
		reason = append(reason, t)
	}
	if len(reason) == 0 {
		return "(no reason given)"
	}
	return strings.Join(reason, " ")
}

// unfinishedLines bounds what is printed of a test that never ended: enough
// for the panic and the test's own goroutine, not a dump of thousands.
const unfinishedLines = 80

// writeCut writes at most max lines of out, then how many it left out.
func writeCut(w io.Writer, out []string, max int) {
	for i, l := range out {
		if i == max {
			fmt.Fprintf(w, "... (%d more lines)\n", len(out)-max)
			return
		}
		fmt.Fprint(w, l)
	}
}
