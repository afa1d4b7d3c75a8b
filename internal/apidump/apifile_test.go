//go:build !race

package main

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestAPIFileCurrent fails while the exported API differs from the file on
// record, naming each added and removed line and the command that
// regenerates the file. It is how CI keeps every API change a reviewed
// line in a diff.
func TestAPIFileCurrent(t *testing.T) {
	needGo(t)
	got, err := Dump(root, "./...")
	if err != nil {
		t.Fatal(err)
	}
	text, err := os.ReadFile(filepath.Join(root, File))
	if err != nil {
		t.Fatalf("%v: generate it with `%s`", err, Command)
	}
	onFile := Parse(string(text))
	slices.Sort(onFile)
	added, removed := Diff(onFile, got)
	if len(added)+len(removed) == 0 {
		return
	}
	var b strings.Builder
	for _, l := range added {
		b.WriteString("\n+ " + l)
	}
	for _, l := range removed {
		b.WriteString("\n- " + l)
	}
	t.Fatalf("the exported API differs from %s (+ in the code only, - on file only):%s\n\nIf the change is deliberate, run `%s` from the module root, commit %s with it and record the change in CHANGELOG.md's Unreleased section.",
		File, b.String(), Command, File)
}
