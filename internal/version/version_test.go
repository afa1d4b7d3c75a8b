package version

import (
	"bufio"
	"os"
	"regexp"
	"testing"
)

// releaseHeading matches a Keep-a-Changelog release heading,
// "## [1.2.3] - 2026-11-27"; "## [Unreleased]" does not match.
var releaseHeading = regexp.MustCompile(`^## \[(\d+\.\d+\.\d+(?:-[0-9A-Za-z.-]+)?)\] - \d{4}-\d{2}-\d{2}\s*$`)

// latestRelease returns the version of the first release heading of the
// changelog at path (the newest: Keep a Changelog lists them newest first).
func latestRelease(t *testing.T, path string) string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if m := releaseHeading.FindStringSubmatch(sc.Text()); m != nil {
			return m[1]
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	t.Fatalf("%s has no release heading like \"## [0.1.0] - 2026-11-27\"", path)
	return ""
}

// TestVersionIsLatestRelease: Version equals CHANGELOG.md's newest release,
// so `ringactor version`, the changelog and the tag cut from it agree.
func TestVersionIsLatestRelease(t *testing.T) {
	if got := latestRelease(t, "../../CHANGELOG.md"); got != Version {
		t.Fatalf("version.Version is %q but CHANGELOG.md's latest release is %q: bump one to match the other", Version, got)
	}
}

// TestReleaseHeading pins what counts as a release heading.
func TestReleaseHeading(t *testing.T) {
	for line, want := range map[string]string{
		"## [0.1.0] - 2026-11-27":       "0.1.0",
		"## [1.10.2-rc.1] - 2027-01-02": "1.10.2-rc.1",
		"## [Unreleased]":               "",
		"### [0.1.0] - 2026-11-27":      "",
		"## [0.1] - 2026-11-27":         "",
	} {
		got := ""
		if m := releaseHeading.FindStringSubmatch(line); m != nil {
			got = m[1]
		}
		if got != want {
			t.Errorf("%q: got %q, want %q", line, got, want)
		}
	}
}
