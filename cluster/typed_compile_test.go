package cluster_test

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// misuse is a program that misuses typed kinds: each marked line must be a
// compile error.
const misuse = `package misuse

import (
	"context"

	"github.com/ringactor/ringactor/actors"
	"github.com/ringactor/ringactor/cluster"
)

type Ping struct{ N int }
type Pong struct{ N int }

func use(ctx context.Context, m *cluster.Member) {
	kind := cluster.Define("ping", func() actors.Handler[Ping, Pong] {
		return func(_ context.Context, p Ping) (Pong, error) { return Pong(p), nil }
	})
	_ = kind.Ref("id", m)                          // ERROR swapped member and identity
	_ = kind.Ref(m, kind)                          // ERROR a kind where the identity belongs
	_, _ = kind.Ref(m, "id").Request(ctx, Pong{})  // ERROR wrong message type
	var p Ping = kind.Ref(m, "id").Request(ctx, Ping{}) // ERROR wrong reply type
	_ = kind.Ref(m, "id").Send(ctx, "text")        // ERROR wrong message type on Send
	var r cluster.Ref[Pong, Ping] = kind.Ref(m, "id") // ERROR a reference of other types
	_, _ = p, r
}
`

// TestTypedMisuseDoesNotCompile builds misuse inside this module (through
// a build overlay, so nothing is written to the source tree) and checks
// that the compiler rejects every marked line.
func TestTypedMisuseDoesNotCompile(t *testing.T) {
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("no go command to compile with: %v", err)
	}
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	src := filepath.Join(dir, "misuse.go")
	if err := os.WriteFile(src, []byte(misuse), 0o600); err != nil {
		t.Fatal(err)
	}
	virtual := filepath.Join(wd, "zz_typed_misuse", "misuse.go")
	overlay, err := json.Marshal(map[string]map[string]string{"Replace": {virtual: src}})
	if err != nil {
		t.Fatal(err)
	}
	ov := filepath.Join(dir, "overlay.json")
	if err := os.WriteFile(ov, overlay, 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(goBin, "build", "-overlay", ov, "-gcflags=-e", "./zz_typed_misuse")
	cmd.Dir = wd
	out, err := cmd.CombinedOutput()
	if err == nil {
		t.Fatalf("the misuse compiled:\n%s", out)
	}
	var want []int
	for i, line := range strings.Split(misuse, "\n") {
		if strings.Contains(line, "// ERROR") {
			want = append(want, i+1)
		}
	}
	got := map[string]bool{}
	for _, m := range regexp.MustCompile(`misuse\.go:(\d+):\d+: `).FindAllStringSubmatch(string(out), -1) {
		got[m[1]] = true
	}
	for _, n := range want {
		if !got[strconv.Itoa(n)] {
			t.Errorf("line %d of the misuse compiled; compiler said:\n%s", n, out)
		}
	}
	if len(got) != len(want) {
		t.Errorf("compile errors on lines %v, want exactly the %d marked lines:\n%s", got, len(want), out)
	}
}
