package persistence

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"
)

func boltProvider() provider {
	return provider{
		name: "bbolt",
		open: func(t *testing.T, opts ...Option) Store {
			b, err := Open(bg(t), filepath.Join(t.TempDir(), "state.db"), opts...)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = b.Close() })
			return b
		},
		corrupt: func(t *testing.T, s Store, key Key) {
			err := s.(*Bolt).db.Update(func(tx *bolt.Tx) error {
				bk := tx.Bucket(boltBucket)
				raw := append([]byte(nil), bk.Get([]byte(key.String()))...)
				if len(raw) == 0 {
					return errors.New("no record to corrupt")
				}
				raw[len(raw)/2] ^= 0x5a
				return bk.Put([]byte(key.String()), raw)
			})
			if err != nil {
				t.Fatal(err)
			}
		},
		unreachable: func(t *testing.T) error {
			// The file is locked by another handle (another process, in
			// production): Open waits until ctx's deadline, then gives up.
			path := filepath.Join(t.TempDir(), "state.db")
			holder, err := Open(bg(t), path)
			if err != nil {
				t.Fatal(err)
			}
			defer holder.Close()
			ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
			defer cancel()
			b, err := Open(ctx, path)
			if err == nil {
				b.Close()
				return errors.New("a second Open of a locked file succeeded")
			}
			return err
		},
	}
}

func TestConformanceBolt(t *testing.T) { runConformance(t, boltProvider()) }

func TestBoltSurvivesReopen(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sub", "state.db")
	b, err := Open(bg(t), path)
	if err != nil {
		t.Fatal(err)
	}
	k := testKey("kept")
	mustSave(t, b, k, 0, 2, "one")
	mustSave(t, b, k, 1, 2, "two")
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	s, err := OpenURL(bg(t), "file://"+path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	wantRecord(t, s, k, 2, 2, "two")
	mustSave(t, s, k, 2, 2, "three")
}

func TestBoltOpenErrors(t *testing.T) {
	dir := t.TempDir()
	notDB := filepath.Join(dir, "not-a-db")
	if err := os.WriteFile(notDB, []byte("this is not a bbolt file, it is much too short and wrong"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := Open(bg(t), notDB); !errors.Is(err, ErrCorruptRecord) {
		t.Errorf("open of a file that is not bbolt: %v, want ErrCorruptRecord", err)
	}
	// A path under a regular file cannot be created.
	if _, err := Open(bg(t), filepath.Join(notDB, "state.db")); !errors.Is(err, ErrStoreUnavailable) {
		t.Errorf("open under a regular file: %v, want ErrStoreUnavailable", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Open(ctx, filepath.Join(dir, "x.db")); !errors.Is(err, context.Canceled) {
		t.Errorf("open with a cancelled context: %v", err)
	}
}
