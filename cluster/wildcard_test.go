package cluster

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"
)

// TestWildcardWarning: binding every interface is logged as a warning,
// binding a specific address is not. (Checked without binding: tests use
// loopback addresses only.)
func TestWildcardWarning(t *testing.T) {
	for _, c := range []struct {
		host string
		warn bool
	}{
		{"0.0.0.0", true}, {"::", true}, {"", true},
		{"127.0.0.1", false}, {"::1", false}, {"10.1.2.3", false}, {"member.example", false},
	} {
		var buf bytes.Buffer
		log := slog.New(slog.NewTextHandler(&buf, nil))
		got := warnIfWildcard(log, c.host, c.host+":7000")
		if got != c.warn || strings.Contains(buf.String(), "level=WARN") != c.warn {
			t.Errorf("host %q: warned %v (log %q), want %v", c.host, got, buf.String(), c.warn)
		}
	}
}
