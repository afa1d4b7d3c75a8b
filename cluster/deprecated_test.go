package cluster_test

import (
	"context"
	"errors"
	"testing"

	"github.com/ringactor/ringactor/cluster"
	"github.com/ringactor/ringactor/messages"
)

// The demo kinds moved out of package cluster (which registers nothing at
// init any more); their old names keep compiling and working.
func TestDeprecatedDemoKinds(t *testing.T) {
	var _ cluster.Object = cluster.Object{"x": 1}
	var req cluster.AddRequest
	req.A, req.B = []float64{1}, []float64{2}
	var _ cluster.AddReply
	kinds := cluster.BuiltinKinds()
	if len(kinds) != 2 || kinds[0].Name() != "echo" || kinds[1].Name() != "add" {
		t.Fatalf("BuiltinKinds = %v", kinds)
	}
	if _, err := messages.IDOf[cluster.AddRequest](); err != nil {
		t.Fatalf("AddRequest not registered by BuiltinKinds: %v", err)
	}
	if _, err := cluster.RequestJSON(context.Background(), nil, "nope", "x", []byte(`{}`)); !errors.Is(err, cluster.ErrUnknownKind) {
		t.Fatalf("RequestJSON of a kind without a JSON form = %v, want ErrUnknownKind", err)
	}
}
