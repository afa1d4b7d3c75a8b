package persistence

import (
	"context"
	"fmt"
	"net/url"
	"strings"
	"sync"
)

// OpenURL opens the store a URL names (what `ringactor serve --state-store
// URL` takes):
//
//   - file:///path/to/state.db: the embedded bbolt store at that path
//     (Open), created if missing; the path must be absolute;
//   - postgres://… or postgresql://…: the PostgreSQL store (OpenPostgres),
//     the URL handed to pgx as is (user, password, host, port, database,
//     sslmode, pool_max_conns, …);
//   - mem:// : a new, empty in-memory store; mem://NAME: the process's
//     in-memory store of that name, created on first use, so that a member
//     restarted in the same process (a test) finds what the last one saved.
//
// Anything else is ErrInvalidURL naming the URL. The options apply to the
// store opened.
func OpenURL(ctx context.Context, rawURL string, opts ...Option) (Store, error) {
	u, err := url.Parse(rawURL)
	if err != nil {
		return nil, fmt.Errorf("%w: state store URL: %v", ErrInvalidURL, err)
	}
	switch strings.ToLower(u.Scheme) {
	case "file":
		if u.Host != "" && u.Host != "localhost" {
			return nil, fmt.Errorf("%w: state store URL %q: a file URL names a local path (file:///path)", ErrInvalidURL, rawURL)
		}
		if u.Path == "" || !strings.HasPrefix(u.Path, "/") {
			return nil, fmt.Errorf("%w: state store URL %q: want file:///absolute/path", ErrInvalidURL, rawURL)
		}
		return Open(ctx, u.Path, opts...)
	case "postgres", "postgresql":
		return OpenPostgres(ctx, rawURL, opts...)
	case "mem", "memory":
		name := u.Host + u.Path
		if name == "" || name == "/" {
			return NewMemory(opts...), nil
		}
		return namedMemory(name, opts), nil
	case "":
		return nil, fmt.Errorf("%w: state store URL %q has no scheme (file:///path, postgres://…, mem://)", ErrInvalidURL, rawURL)
	default:
		return nil, fmt.Errorf("%w: state store URL %q: unknown scheme %q (file, postgres, postgresql, mem)", ErrInvalidURL, rawURL, u.Scheme)
	}
}

var (
	memNamesMu sync.Mutex
	memNames   = map[string]*Memory{}
)

// namedMemory returns a new handle on the process's in-memory store name.
func namedMemory(name string, opts []Option) *Memory {
	memNamesMu.Lock()
	defer memNamesMu.Unlock()
	m, ok := memNames[name]
	if !ok {
		m = NewMemory(opts...)
		memNames[name] = m
		return m.Reopen()
	}
	h := m.Reopen()
	h.cfg = newConfig(opts)
	return h
}
