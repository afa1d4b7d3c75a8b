// Package bank is the user code of the cluster example: a stateful
// "account" kind whose every identity (an account number) keeps its
// balance in its own ring kernel, on whichever member the cluster places
// it. The member and client programs beside it deploy it.
package bank

import (
	"context"
	"errors"
	"fmt"

	"github.com/ringactor/ringactor/actors"
	"github.com/ringactor/ringactor/cluster"
	"github.com/ringactor/ringactor/messages"
)

// Kind is the cluster kind of accounts.
const Kind = "account"

// Op is a request to an account: deposit (Amount > 0), withdraw
// (Amount < 0) or read the balance (Amount 0).
type Op struct {
	Amount int64
}

// Balance is an account's reply: its balance after the op and how many
// ops changed it.
type Balance struct {
	Balance int64
	Ops     int64
}

// ErrInsufficientFunds is the handler's error for a withdrawal larger than
// the balance; the client sees it as a *cluster.RemoteError.
var ErrInsufficientFunds = errors.New("bank: insufficient funds")

// Register registers the example's message types; both the members and
// the clients call it (a type's id comes from its name).
func Register() {
	messages.MustRegister[Op]("example.bank.Op")
	messages.MustRegister[Balance]("example.bank.Balance")
}

// newAccount is the handler of one account: its state lives in the
// closure, which only the account's ring kernel runs.
func newAccount() actors.Handler[Op, Balance] {
	var b Balance
	return func(_ context.Context, op Op) (Balance, error) {
		if op.Amount < 0 && b.Balance+op.Amount < 0 {
			return b, fmt.Errorf("%w: balance %d, withdrawing %d", ErrInsufficientFunds, b.Balance, -op.Amount)
		}
		if op.Amount != 0 {
			b.Balance += op.Amount
			b.Ops++
		}
		return b, nil
	}
}

// Kinds are the kinds a member hosts.
func Kinds() []*cluster.Kind {
	return []*cluster.Kind{cluster.NewKind(Kind, newAccount)}
}

// Apply sends op to account from any member or client of the cluster.
func Apply(ctx context.Context, m *cluster.Member, account string, op Op) (Balance, error) {
	return cluster.Request[Balance](ctx, m, Kind, account, op)
}
