//go:build !race

// Built without -race like cluster_test.go: members start in this process.

package cluster

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/ringactor/ringactor/actors"
	"github.com/ringactor/ringactor/internal/testutil/hangguard"
	"github.com/ringactor/ringactor/internal/testutil/testproc"
)

// startLeaks are what a member that failed to start may leave by design
// (Proto.Actor's log throttles).
func startLeaks(t *testing.T) []goleak.Option {
	return append(testproc.ProtoActorThrottles(), goleak.IgnoreCurrent())
}

// TestStartBadAddresses: every bind or advertised address that cannot work
// fails Start with an *AddressError matching ErrBadAddress (Malformed as
// expected), with no panic and nothing left running.
func TestStartBadAddresses(t *testing.T) {
	held, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer held.Close()
	leaks := startLeaks(t)
	for _, c := range []struct {
		name, bind, advertise string
		which                 string
		malformed             bool
		reason                string
	}{
		{"InvalidIPv4", "256.0.0.1:1", "", "bind", true, "not a valid IP address"},
		{"BadCharacter", "my host:7000", "", "bind", true, "not allowed"},
		{"NoPort", "127.0.0.1", "", "bind", true, "not HOST:PORT"},
		{"PortOutOfRange", "127.0.0.1:70000", "", "bind", true, "port"},
		{"Unresolvable", "no-such-host.invalid:7000", "", "bind", false, "does not resolve"},
		{"PortInUse", held.Addr().String(), "", "bind", false, "port in use"},
		{"NotLocal", "192.0.2.1:7000", "", "bind", false, "not an address of this host"},
		{"AdvertiseWildcard", "127.0.0.1:0", "0.0.0.0:7000", "advertise", true, "wildcard"},
		{"AdvertiseInvalid", "127.0.0.1:0", "256.1.1.1:7000", "advertise", true, "not a valid IP address"},
		{"AdvertiseUnresolvable", "127.0.0.1:0", "nowhere.invalid:7000", "advertise", false, "does not resolve"},
	} {
		t.Run(c.name, func(t *testing.T) {
			opts := []Option{WithAddress(c.bind), WithLogger(actors.DiscardLogger())}
			if c.advertise != "" {
				opts = append(opts, WithAdvertise(c.advertise))
			}
			m, err := Start(hangguard.Context(t), "bad", Peers(nil), nil, opts...)
			if err == nil {
				_ = m.Close(context.Background())
				t.Fatal("Start succeeded")
			}
			var ae *AddressError
			if !errors.Is(err, ErrBadAddress) || !errors.As(err, &ae) {
				t.Fatalf("got %v (%T), want an *AddressError matching ErrBadAddress", err, err)
			}
			if ae.Which != c.which || ae.Malformed != c.malformed || !strings.Contains(err.Error(), c.reason) {
				t.Fatalf("got %q (which %q, malformed %v), want which %q, malformed %v, reason %q", err, ae.Which, ae.Malformed, c.which, c.malformed, c.reason)
			}
		})
	}
	if err := goleak.Find(leaks...); err != nil {
		t.Errorf("a member that failed to start left goroutines: %v", err)
	}
}

// TestStartBadSeeds: a seed that can never be dialled (a wildcard, an
// invalid host, no port) fails Start with a Malformed seed *AddressError,
// and seeds of which none resolves with one that is not Malformed, before
// anything starts; a seed that does not resolve beside one that does is
// logged, and the member starts.
func TestStartBadSeeds(t *testing.T) {
	leaks := startLeaks(t)
	for _, c := range []struct {
		name      string
		seeds     []string
		address   string
		malformed bool
		reason    string
	}{
		{"Wildcard", []string{"0.0.0.0:7000"}, "0.0.0.0:7000", true, "wildcard"},
		{"WildcardEmptyHost", []string{":7000"}, ":7000", true, "wildcard"},
		{"InvalidIPv4", []string{"127.0.0.1:7000", "256.0.0.1:7000"}, "256.0.0.1:7000", true, "not a valid IP address"},
		{"NoPort", []string{"127.0.0.1"}, "127.0.0.1", true, "not HOST:PORT"},
		{"Unresolvable", []string{"no-such-host.invalid:7000"}, "no-such-host.invalid:7000", false, "does not resolve"},
		{"NoneResolves", []string{"a.invalid:7000", "b.invalid:7000"}, "a.invalid:7000", false, "no other seed resolves"},
	} {
		t.Run(c.name, func(t *testing.T) {
			start := time.Now()
			m, err := Start(hangguard.Context(t), "bad", Peers(c.seeds), nil, WithLogger(actors.DiscardLogger()))
			if err == nil {
				_ = m.Close(context.Background())
				t.Fatal("Start succeeded")
			}
			var ae *AddressError
			if !errors.Is(err, ErrBadAddress) || !errors.As(err, &ae) {
				t.Fatalf("got %v (%T), want an *AddressError matching ErrBadAddress", err, err)
			}
			if ae.Which != "seed" || ae.Address != c.address || ae.Malformed != c.malformed || !strings.Contains(err.Error(), c.reason) {
				t.Fatalf("got %q (which %q, address %q, malformed %v), want seed %q, malformed %v, reason %q",
					err, ae.Which, ae.Address, ae.Malformed, c.address, c.malformed, c.reason)
			}
			t.Logf("refused in %v", time.Since(start))
		})
	}
	if err := goleak.Find(leaks...); err != nil {
		t.Errorf("a member that failed to start left goroutines: %v", err)
	}

	t.Run("OneResolves", func(t *testing.T) {
		logs := &testproc.Buffer{}
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		dead := l.Addr().String()
		_ = l.Close()
		m, err := Start(hangguard.Context(t), "bad", Peers([]string{"nowhere.invalid:7000", dead}), nil,
			WithLogger(slog.New(slog.NewTextHandler(logs, nil))))
		if err != nil {
			t.Fatalf("Start with one seed that resolves: %v", err)
		}
		defer func() { _ = m.Close(context.Background()) }()
		if got := logs.String(); !strings.Contains(got, "a seed does not resolve") || !strings.Contains(got, "nowhere.invalid:7000") {
			t.Errorf("no warning naming the seed that does not resolve:\n%s", got)
		}
	})
}

// TestStartCleanupWhenRemoteCannotListen: when Proto.Actor's remote itself
// cannot listen (the port was taken after Start's check), Start returns an
// *AddressError instead of panicking in the cleanup of a gRPC server that
// never started, and leaves nothing running.
func TestStartCleanupWhenRemoteCannotListen(t *testing.T) {
	held, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer held.Close()
	leaks := startLeaks(t)
	skipCheck := func(c *memberConfig) { c.noBindCheck = true }
	for _, client := range []bool{false, true} {
		opts := []Option{WithAddress(held.Addr().String()), WithLogger(actors.DiscardLogger()), skipCheck}
		if client {
			opts = append(opts, AsClient())
		}
		ctx, cancel := context.WithTimeout(hangguard.Context(t), time.Minute) // a hang guard
		m, err := Start(ctx, "held", Peers(nil), nil, opts...)
		cancel()
		if err == nil {
			_ = m.Close(context.Background())
			t.Fatalf("client %v: Start succeeded on a held port", client)
		}
		var ae *AddressError
		if !errors.As(err, &ae) || ae.Which != "bind" || ae.Malformed || !strings.Contains(err.Error(), "port in use") {
			t.Fatalf("client %v: got %v (%T), want a bind *AddressError saying the port is in use", client, err, err)
		}
	}
	if err := goleak.Find(leaks...); err != nil {
		t.Errorf("a member whose remote could not listen left goroutines: %v", err)
	}
}

// TestCheckHost covers CheckHost's verdicts without starting anything.
func TestCheckHost(t *testing.T) {
	ctx := hangguard.Context(t)
	for host, want := range map[string]string{ // "" = accepted; else "malformed" or "unusable"
		"127.0.0.1": "", "::1": "", "fe80::1%lo": "", "localhost": "", "": "", "0.0.0.0": "", "::": "",
		"256.0.0.1": "malformed", "1.2.3": "malformed", "a..b": "malformed", "-a.b": "malformed", "a b": "malformed",
		"x.invalid": "unusable",
	} {
		err := CheckHost(ctx, host, true)
		var ae *AddressError
		switch {
		case want == "" && err != nil:
			t.Errorf("CheckHost(%q): %v", host, err)
		case want != "" && (!errors.As(err, &ae) || !errors.Is(err, ErrBadAddress)):
			t.Errorf("CheckHost(%q) = %v, want an *AddressError", host, err)
		case want != "" && ae.Malformed != (want == "malformed"):
			t.Errorf("CheckHost(%q) = %v: malformed %v, want %s", host, err, ae.Malformed, want)
		}
	}
	for _, host := range []string{"", "0.0.0.0", "::"} {
		var ae *AddressError
		if err := CheckHost(ctx, host, false); !errors.As(err, &ae) || !ae.Malformed {
			t.Errorf("CheckHost(%q, no wildcard) = %v, want a malformed *AddressError", host, err)
		}
	}
}
