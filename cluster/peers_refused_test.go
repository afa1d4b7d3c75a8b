package cluster

import (
	"errors"
	"net"
	"strings"
	"testing"
	"time"
)

// An address where nothing listens asks for a round of greetings at once
// the first time it refuses (the join may settle on it), and not again:
// otherwise that round greets it at once, and a dead seed is dialled in a
// loop.
func TestRefusedPeerSignalsOnce(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	p := Peers([]string{addr})
	pr := &peer{seed: true, lastSeen: time.Now()}
	p.peers[addr] = pr
	greet := func() bool {
		p.mu.Lock()
		pr.pinging = true
		p.mu.Unlock()
		p.pings.Add(1)
		p.greet(addr, pr)
		select {
		case <-p.kick:
			return true
		default:
			return false
		}
	}
	if !greet() {
		t.Fatal("the first refusal asked for no round")
	}
	p.mu.Lock()
	tried, pinging := pr.tried, pr.pinging
	p.mu.Unlock()
	if !tried || pinging {
		t.Fatalf("after a refusal: tried %v, pinging %v", tried, pinging)
	}
	for i := range 3 {
		if greet() {
			t.Fatalf("refusal %d asked for another round at once", i+2)
		}
	}
}

// A request waiting for a topology names the addresses that refused its
// probe: "no cluster topology yet" alone does not say the seed is dead.
func TestUnreachableNamesRefusedSeed(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	p := Peers([]string{addr})
	pr := &peer{seed: true, lastSeen: time.Now()}
	p.peers[addr] = pr
	if got := p.unreachable(); got != "" {
		t.Fatalf("unreachable before any probe = %q, want none", got)
	}
	p.mu.Lock()
	pr.pinging = true
	p.mu.Unlock()
	p.pings.Add(1)
	p.greet(addr, pr)
	want := addr + " refused the connection"
	if got := p.unreachable(); !strings.Contains(got, want) {
		t.Fatalf("unreachable after a refusal = %q, want it to contain %q", got, want)
	}
	m := &Member{unreachable: p.unreachable}
	if err := m.noTopologyError(); !errors.Is(err, ErrMemberUnavailable) || !strings.Contains(err.Error(), want) {
		t.Fatalf("noTopologyError = %v, want ErrMemberUnavailable naming %s", err, addr)
	}
}
