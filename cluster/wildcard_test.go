package cluster

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"
)

// TestWildcardLog: binding every interface (as a pod does) is one INFO line
// that says what is bound and what is advertised, never a warning; binding
// a specific address logs nothing. (Checked without binding: tests use
// loopback addresses only.)
func TestWildcardLog(t *testing.T) {
	for _, c := range []struct {
		host   string
		given  bool
		logged bool
	}{
		{"0.0.0.0", false, true}, {"::", true, true}, {"", false, true},
		{"127.0.0.1", false, false}, {"::1", false, false}, {"10.1.2.3", true, false}, {"member.example", false, false},
	} {
		var buf bytes.Buffer
		log := slog.New(slog.NewTextHandler(&buf, nil))
		got := logWildcard(log, c.host, 7000, "10.0.0.7:7000", c.given)
		out := buf.String()
		if got != c.logged || strings.Count(out, "\n") != map[bool]int{true: 1, false: 0}[c.logged] {
			t.Errorf("host %q: logged %v (log %q), want %v", c.host, got, out, c.logged)
		}
		if strings.Contains(out, "level=WARN") {
			t.Errorf("host %q: a warning: %q", c.host, out)
		}
		if c.logged && (!strings.Contains(out, "level=INFO") || !strings.Contains(out, "advertised=10.0.0.7:7000")) {
			t.Errorf("host %q: %q, want an INFO line naming the advertised address", c.host, out)
		}
	}
}
