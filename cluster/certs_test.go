//go:build !race

package cluster_test

import (
	"os"
	"path/filepath"
	"testing"
)

// writeFiles writes name → contents into a temporary directory and returns
// the paths by name.
func writeFiles(t *testing.T, files map[string][]byte) map[string]string {
	t.Helper()
	dir := t.TempDir()
	paths := make(map[string]string, len(files))
	for name, data := range files {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, data, 0o600); err != nil {
			t.Fatal(err)
		}
		paths[name] = p
	}
	return paths
}
