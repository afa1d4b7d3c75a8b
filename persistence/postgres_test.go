package persistence

import (
	"context"
	"errors"
	"fmt"
	"os"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/ringactor/ringactor/internal/testutil/pgtest"
)

// TestMain shares one PostgreSQL server among the package's tests (started
// on first use, stopped at the end) and checks that no goroutine (a pgx
// pool's) outlives them.
func TestMain(m *testing.M) {
	code := pgtest.Main(m)
	if code == 0 {
		if err := goleak.Find(); err != nil {
			fmt.Fprintln(os.Stderr, "leaked goroutines:", err)
			code = 1
		}
	}
	os.Exit(code)
}

func pgProvider() provider {
	return provider{
		name: "postgres",
		open: func(t *testing.T, opts ...Option) Store {
			p, err := OpenPostgres(bg(t), pgtest.DSN(t), opts...)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = p.Close() })
			return p
		},
		corrupt: func(t *testing.T, s Store, key Key) {
			p := s.(*Postgres)
			tag, err := p.Pool().Exec(bg(t), `UPDATE `+p.Table()+` SET value = '\xdeadbeef'::bytea WHERE cluster = $1 AND kind = $2 AND identity = $3`,
				key.Cluster, key.Kind, key.Identity)
			if err != nil || tag.RowsAffected() != 1 {
				t.Fatalf("corrupt %s: %v (%d rows)", key, err, tag.RowsAffected())
			}
		},
		unreachable: func(t *testing.T) error {
			port := closedPort(t)
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			s, err := OpenURL(ctx, fmt.Sprintf("postgres://postgres@127.0.0.1:%d/none?sslmode=disable&connect_timeout=5", port))
			if err == nil {
				s.Close()
				return errors.New("OpenURL of a port nobody listens on succeeded")
			}
			return err
		},
	}
}

func TestConformancePostgres(t *testing.T) { runConformance(t, pgProvider()) }
