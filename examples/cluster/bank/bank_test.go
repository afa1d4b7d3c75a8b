package bank

import (
	"context"
	"errors"
	"testing"
)

func TestAccountKeepsItsBalance(t *testing.T) {
	h := newAccount()
	ctx := context.Background()
	for _, amount := range []int64{10, 5, -3} {
		if _, err := h(ctx, Op{Amount: amount}); err != nil {
			t.Fatal(err)
		}
	}
	b, err := h(ctx, Op{Amount: -13})
	if !errors.Is(err, ErrInsufficientFunds) || b.Balance != 12 {
		t.Fatalf("overdraft = %+v, %v; want ErrInsufficientFunds and balance 12", b, err)
	}
	if b, _ := h(ctx, Op{}); b.Balance != 12 || b.Ops != 3 {
		t.Fatalf("balance %+v, want 12 after 3 ops", b)
	}
	if other, _ := newAccount()(ctx, Op{}); other.Balance != 0 {
		t.Fatal("accounts share state")
	}
}
