package hangguard

import (
	"testing"
	"time"
)

func TestContextEndsWithTheTest(t *testing.T) {
	var ctx interface{ Err() error }
	t.Run("inner", func(t *testing.T) {
		c := Context(t)
		if c.Err() != nil {
			t.Fatalf("a new hang guard is done: %v", c.Err())
		}
		if d, ok := t.Deadline(); ok {
			if got, ok := c.Deadline(); !ok || !got.Equal(d.Add(-Margin)) {
				t.Fatalf("deadline %v (%v), want %v", got, ok, d.Add(-Margin))
			}
		} else if _, ok := c.Deadline(); ok {
			t.Fatal("a deadline without go test's -timeout")
		}
		ctx = c
	})
	if ctx.Err() == nil {
		t.Fatal("the hang guard outlived its test")
	}
	_ = time.Second
}
