package persistence

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"sync"
	"testing"
	"time"
)

// provider is one Store implementation under the conformance suite.
type provider struct {
	name string
	// open returns a fresh, empty store (closed by the test's cleanup).
	open func(t *testing.T, opts ...Option) Store
	// corrupt damages the stored bytes of key's record in s's backing store.
	corrupt func(t *testing.T, s Store, key Key)
	// unreachable returns the error of using a store that cannot be reached.
	unreachable func(t *testing.T) error
}

func memProvider() provider {
	return provider{
		name: "memory",
		open: func(t *testing.T, opts ...Option) Store {
			m := NewMemory(opts...)
			t.Cleanup(func() { _ = m.Close() })
			return m
		},
		corrupt: func(t *testing.T, s Store, key Key) {
			if !s.(*Memory).Corrupt(key) {
				t.Fatalf("no record %s to corrupt", key)
			}
		},
		unreachable: func(t *testing.T) error {
			m := NewMemory()
			m.Fail(errors.New("connection refused"))
			_, err := m.Save(context.Background(), testKey("x"), 0, 1, []byte("v"))
			if err == nil {
				return errors.New("a failing memory store accepted a save")
			}
			m.Fail(nil)
			if _, lerr := m.Load(context.Background(), testKey("x")); !errors.Is(lerr, ErrNotFound) {
				return fmt.Errorf("a save refused while failing left something: %v", lerr)
			}
			return err
		},
	}
}

func testKey(id string) Key { return Key{Cluster: "c1", Kind: "account", Identity: id} }

// bg is a context for one test call, with a deadline long enough for a busy
// machine.
func bg(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	t.Cleanup(cancel)
	return ctx
}

func mustSave(t *testing.T, s Store, key Key, expected uint64, schema uint32, value string) uint64 {
	t.Helper()
	v, err := s.Save(bg(t), key, expected, schema, []byte(value))
	if err != nil {
		t.Fatalf("save %s at %d: %v", key, expected, err)
	}
	if v != expected+1 {
		t.Fatalf("save %s at %d: new version %d, want %d", key, expected, v, expected+1)
	}
	return v
}

func wantRecord(t *testing.T, s Store, key Key, version uint64, schema uint32, value string) {
	t.Helper()
	rec, err := s.Load(bg(t), key)
	if err != nil {
		t.Fatalf("load %s: %v", key, err)
	}
	if rec.Key != key || rec.Version != version || rec.Schema != schema || string(rec.Value) != value {
		t.Fatalf("load %s: got key %v version %d schema %d value %q, want version %d schema %d value %q",
			key, rec.Key, rec.Version, rec.Schema, rec.Value, version, schema, value)
	}
	if rec.Updated.IsZero() {
		t.Fatalf("load %s: no updated time", key)
	}
}

func wantConflict(t *testing.T, err error, key Key, expected, actual uint64) {
	t.Helper()
	var ce *ConflictError
	if !errors.As(err, &ce) || !errors.Is(err, ErrVersionConflict) {
		t.Fatalf("got %v, want a *ConflictError", err)
	}
	if ce.Key != key || ce.Expected != expected || ce.Actual != actual {
		t.Fatalf("conflict %+v, want key %v expected %d actual %d", *ce, key, expected, actual)
	}
}

// runConformance runs the table of cases every provider must pass.
func runConformance(t *testing.T, p provider) {
	cases := []struct {
		name string
		run  func(t *testing.T, p provider)
	}{
		{"LoadMissing", func(t *testing.T, p provider) {
			s := p.open(t)
			_, err := s.Load(bg(t), testKey("none"))
			if !errors.Is(err, ErrNotFound) {
				t.Fatalf("load of a missing key: %v, want ErrNotFound", err)
			}
		}},
		{"SaveLoadCAS", func(t *testing.T, p provider) {
			s := p.open(t)
			k := testKey("a")
			mustSave(t, s, k, 0, 3, "one")
			wantRecord(t, s, k, 1, 3, "one")
			mustSave(t, s, k, 1, 4, "two")
			wantRecord(t, s, k, 2, 4, "two")
			_, err := s.Save(bg(t), k, 1, 4, []byte("stale"))
			wantConflict(t, err, k, 1, 2)
			_, err = s.Save(bg(t), k, 0, 4, []byte("again"))
			wantConflict(t, err, k, 0, 2)
			_, err = s.Save(bg(t), k, 7, 4, []byte("ahead"))
			wantConflict(t, err, k, 7, 2)
			_, err = s.Save(bg(t), testKey("missing"), 5, 1, []byte("x"))
			wantConflict(t, err, testKey("missing"), 5, 0)
			wantRecord(t, s, k, 2, 4, "two")
			if _, err := s.Load(bg(t), testKey("missing")); !errors.Is(err, ErrNotFound) {
				t.Fatalf("a refused save created a record: %v", err)
			}
		}},
		{"ValuesAreCopied", func(t *testing.T, p provider) {
			s := p.open(t)
			k := testKey("copy")
			in := []byte("abc")
			if _, err := s.Save(bg(t), k, 0, 1, in); err != nil {
				t.Fatal(err)
			}
			in[0] = 'X'
			rec, err := s.Load(bg(t), k)
			if err != nil {
				t.Fatal(err)
			}
			rec.Value[1] = 'Y'
			wantRecord(t, s, k, 1, 1, "abc")
		}},
		{"EmptyValue", func(t *testing.T, p provider) {
			s := p.open(t)
			k := testKey("empty")
			if _, err := s.Save(bg(t), k, 0, 0, nil); err != nil {
				t.Fatal(err)
			}
			wantRecord(t, s, k, 1, 0, "")
		}},
		{"KeysAreDistinct", func(t *testing.T, p provider) {
			s := p.open(t)
			keys := []Key{
				{Cluster: "a/b", Kind: "c", Identity: "d"},
				{Cluster: "a", Kind: "b/c", Identity: "d"},
				{Cluster: "", Kind: "a", Identity: "b/c/d"},
				{Cluster: "a%2Fb", Kind: "c", Identity: "d"},
				{Cluster: "c1", Kind: "k", Identity: "ünïcode ✓"},
				{Cluster: "c2", Kind: "k", Identity: "ünïcode ✓"},
			}
			for i, k := range keys {
				mustSave(t, s, k, 0, uint32(i), fmt.Sprint("v", i))
			}
			for i, k := range keys {
				wantRecord(t, s, k, 1, uint32(i), fmt.Sprint("v", i))
			}
		}},
		{"InvalidKey", func(t *testing.T, p provider) {
			s := p.open(t)
			for _, k := range []Key{{Kind: "k"}, {Identity: "i"}, {Kind: "k", Identity: "a\x00b"}, {Kind: "k", Identity: "\xff"}} {
				if _, err := s.Save(bg(t), k, 0, 1, nil); !errors.Is(err, ErrInvalidKey) {
					t.Errorf("save %q: %v, want ErrInvalidKey", k.String(), err)
				}
				if _, err := s.Load(bg(t), k); !errors.Is(err, ErrInvalidKey) {
					t.Errorf("load %q: %v, want ErrInvalidKey", k.String(), err)
				}
			}
		}},
		{"Delete", func(t *testing.T, p provider) {
			s := p.open(t)
			k := testKey("d")
			if err := s.Delete(bg(t), k, 0); err != nil {
				t.Fatalf("delete of a missing key with expected 0: %v", err)
			}
			wantConflict(t, s.Delete(bg(t), k, 3), k, 3, 0)
			mustSave(t, s, k, 0, 1, "x")
			mustSave(t, s, k, 1, 1, "y")
			wantConflict(t, s.Delete(bg(t), k, 1), k, 1, 2)
			wantConflict(t, s.Delete(bg(t), k, 0), k, 0, 2)
			wantRecord(t, s, k, 2, 1, "y")
			if err := s.Delete(bg(t), k, 2); err != nil {
				t.Fatal(err)
			}
			if _, err := s.Load(bg(t), k); !errors.Is(err, ErrNotFound) {
				t.Fatalf("load after delete: %v", err)
			}
			mustSave(t, s, k, 0, 1, "new") // created again: version 1
		}},
		{"Batch", func(t *testing.T, p provider) {
			s := p.open(t, WithMaxRecordSize(8))
			a, b, c, d := testKey("a"), testKey("b"), testKey("c"), testKey("d")
			mustSave(t, s, b, 0, 1, "b1")
			mustSave(t, s, d, 0, 1, "d1")
			ops := []Op{
				SaveOp(a, 0, 2, []byte("a1")),
				SaveOp(b, 0, 2, []byte("stale")), // conflict: b is at 1
				SaveOp(c, 0, 2, []byte("too large")),
				SaveOp(Key{Kind: "k"}, 0, 2, nil),
				SaveOp(a, 1, 2, []byte("a2")), // sees the first op
				DeleteOp(d, 1),
				SaveOp(b, 1, 2, []byte("b2")),
			}
			res, err := s.Batch(bg(t), ops)
			if err != nil {
				t.Fatal(err)
			}
			if len(res) != len(ops) {
				t.Fatalf("%d results for %d ops", len(res), len(ops))
			}
			for i, want := range []uint64{1, 0, 0, 0, 2, 0, 2} {
				if res[i].Version != want {
					t.Errorf("op %d: version %d, want %d (err %v)", i, res[i].Version, want, res[i].Err)
				}
			}
			for _, i := range []int{0, 4, 5, 6} {
				if res[i].Err != nil {
					t.Errorf("op %d: %v", i, res[i].Err)
				}
			}
			wantConflict(t, res[1].Err, b, 0, 1)
			if !errors.Is(res[2].Err, ErrRecordTooLarge) {
				t.Errorf("op 2: %v, want ErrRecordTooLarge", res[2].Err)
			}
			if !errors.Is(res[3].Err, ErrInvalidKey) {
				t.Errorf("op 3: %v, want ErrInvalidKey", res[3].Err)
			}
			wantRecord(t, s, a, 2, 2, "a2")
			wantRecord(t, s, b, 2, 2, "b2")
			if _, err := s.Load(bg(t), c); !errors.Is(err, ErrNotFound) {
				t.Errorf("an oversized op stored something: %v", err)
			}
			if _, err := s.Load(bg(t), d); !errors.Is(err, ErrNotFound) {
				t.Errorf("the delete did not apply: %v", err)
			}
			if res, err := s.Batch(bg(t), nil); err != nil || len(res) != 0 {
				t.Errorf("empty batch: %v, %v", res, err)
			}
		}},
		{"Oversize", func(t *testing.T, p provider) {
			s := p.open(t, WithMaxRecordSize(16))
			k := testKey("big")
			if _, err := s.Save(bg(t), k, 0, 1, bytes.Repeat([]byte("x"), 16)); err != nil {
				t.Fatalf("a value of exactly the maximum: %v", err)
			}
			_, err := s.Save(bg(t), k, 1, 1, bytes.Repeat([]byte("y"), 17))
			if !errors.Is(err, ErrRecordTooLarge) {
				t.Fatalf("a value over the maximum: %v, want ErrRecordTooLarge", err)
			}
			wantRecord(t, s, k, 1, 1, "xxxxxxxxxxxxxxxx")
		}},
		{"ConcurrentSaversOneWins", func(t *testing.T, p provider) {
			s := p.open(t)
			k := testKey("race")
			mustSave(t, s, k, 0, 1, "start")
			const n = 8
			var (
				wg      sync.WaitGroup
				start   = make(chan struct{})
				errs    [n]error
				winners []int
				mu      sync.Mutex
			)
			for i := range n {
				wg.Add(1)
				go func() {
					defer wg.Done()
					<-start
					_, err := s.Save(bg(t), k, 1, 1, []byte(fmt.Sprint("writer", i)))
					errs[i] = err
					if err == nil {
						mu.Lock()
						winners = append(winners, i)
						mu.Unlock()
					}
				}()
			}
			close(start)
			wg.Wait()
			if len(winners) != 1 {
				t.Fatalf("%d saves against version 1 succeeded (%v), want exactly 1; errors %v", len(winners), winners, errs)
			}
			for i, err := range errs {
				if i != winners[0] {
					wantConflict(t, err, k, 1, 2)
				}
			}
			wantRecord(t, s, k, 2, 1, fmt.Sprint("writer", winners[0]))
		}},
		{"CorruptRecord", func(t *testing.T, p provider) {
			s := p.open(t)
			k := testKey("bad")
			mustSave(t, s, k, 0, 1, "precious state")
			mustSave(t, s, testKey("good"), 0, 1, "fine")
			p.corrupt(t, s, k)
			_, err := s.Load(bg(t), k)
			if !errors.Is(err, ErrCorruptRecord) {
				t.Fatalf("load of a corrupt record: %v, want ErrCorruptRecord", err)
			}
			wantRecord(t, s, testKey("good"), 1, 1, "fine")
		}},
		{"CancelledContext", func(t *testing.T, p provider) {
			s := p.open(t)
			ctx, cancel := context.WithCancel(context.Background())
			cancel()
			k := testKey("ctx")
			if _, err := s.Save(ctx, k, 0, 1, []byte("x")); !errors.Is(err, context.Canceled) {
				t.Errorf("save: %v, want context.Canceled", err)
			}
			if _, err := s.Batch(ctx, []Op{SaveOp(k, 0, 1, nil)}); !errors.Is(err, context.Canceled) {
				t.Errorf("batch: %v, want context.Canceled", err)
			}
			if _, err := s.Load(ctx, k); !errors.Is(err, context.Canceled) {
				t.Errorf("load: %v, want context.Canceled", err)
			}
			if err := s.Delete(ctx, k, 0); !errors.Is(err, context.Canceled) {
				t.Errorf("delete: %v, want context.Canceled", err)
			}
			if _, err := s.Load(bg(t), k); !errors.Is(err, ErrNotFound) {
				t.Errorf("a cancelled save stored something: %v", err)
			}
		}},
		{"Closed", func(t *testing.T, p provider) {
			s := p.open(t)
			k := testKey("closed")
			mustSave(t, s, k, 0, 1, "x")
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}
			if err := s.Close(); err != nil {
				t.Fatalf("second close: %v", err)
			}
			if _, err := s.Load(bg(t), k); !errors.Is(err, ErrClosed) {
				t.Errorf("load: %v, want ErrClosed", err)
			}
			if _, err := s.Save(bg(t), k, 1, 1, nil); !errors.Is(err, ErrClosed) {
				t.Errorf("save: %v, want ErrClosed", err)
			}
			if err := s.Delete(bg(t), k, 1); !errors.Is(err, ErrClosed) {
				t.Errorf("delete: %v, want ErrClosed", err)
			}
			if _, err := s.Batch(bg(t), []Op{DeleteOp(k, 1)}); !errors.Is(err, ErrClosed) {
				t.Errorf("batch: %v, want ErrClosed", err)
			}
		}},
		{"Unreachable", func(t *testing.T, p provider) {
			err := p.unreachable(t)
			if !errors.Is(err, ErrStoreUnavailable) {
				t.Fatalf("an unreachable store: %v, want ErrStoreUnavailable", err)
			}
			if !wrapsCause(err) {
				t.Fatalf("ErrStoreUnavailable without its cause: %v", err)
			}
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) { c.run(t, p) })
	}
}

func TestConformanceMemory(t *testing.T) { runConformance(t, memProvider()) }

// wrapsCause reports whether err wraps an error besides ErrStoreUnavailable.
func wrapsCause(err error) bool {
	for err != nil {
		if m, ok := err.(interface{ Unwrap() []error }); ok {
			for _, e := range m.Unwrap() {
				if e != ErrStoreUnavailable && (e != nil) {
					return true
				}
			}
			return false
		}
		err = errors.Unwrap(err)
	}
	return false
}

// closedPort returns a loopback port nobody listens on (it was free a
// moment ago).
func closedPort(t *testing.T) int {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	return port
}
