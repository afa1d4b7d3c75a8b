package devcore

import (
	"context"
	"errors"
	"testing"
	"time"
)

// TestPaceSharesAndBounces: the requests waiting when an epoch takes them
// get that epoch's outcome; a request withdrawn before an epoch took it
// is gone; bounced requests are told to ask again; a request made after
// the take waits for the next epoch.
func TestPaceSharesAndBounces(t *testing.T) {
	var p Pace
	a, b, gone := p.Request(), p.Request(), p.Request()
	if !p.Withdraw(gone) || p.Waiting() != 2 {
		t.Fatalf("withdraw: waiting %d, want 2", p.Waiting())
	}
	taken := p.Take()
	late := p.Request()
	if p.Withdraw(a) {
		t.Fatal("withdrew a request an epoch had taken")
	}
	want := errors.New("park failed")
	p.Serve(taken, 3*time.Millisecond, want)
	for _, r := range []*Request{a, b} {
		<-r.Done()
		if took, bounced, err := r.Outcome(); bounced || took != 3*time.Millisecond || !errors.Is(err, want) {
			t.Fatalf("outcome %v %v %v", took, bounced, err)
		}
	}
	if late.Finished() || gone.Finished() {
		t.Fatal("a request not taken was finished")
	}
	p.Bounce(p.Take())
	if _, bounced, _ := late.Outcome(); !late.Finished() || !bounced {
		t.Fatal("the late request was not bounced")
	}
}

// TestPaceSpacing: before any epoch the next may park at once; after one
// that took d, the next waits max(spacing, d) from its end.
func TestPaceSpacing(t *testing.T) {
	var p Pace
	if !p.Next(time.Hour).IsZero() || p.Wait(context.Background(), time.Hour) != nil {
		t.Fatal("the first epoch waits")
	}
	p.Ended(2 * time.Hour)
	end := p.LastEnd()
	if got := p.Next(time.Hour); !got.Equal(end.Add(2 * time.Hour)) {
		t.Fatalf("next %v, want the epoch's duration after %v", got, end)
	}
	if got := p.Next(3 * time.Hour); !got.Equal(end.Add(3 * time.Hour)) {
		t.Fatalf("next %v, want the spacing after %v", got, end)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := p.Wait(ctx, time.Hour); !errors.Is(err, context.Canceled) {
		t.Fatalf("wait with an ended context: %v", err)
	}
}
