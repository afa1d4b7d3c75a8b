package docscheck

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"unicode"
)

// root is the repository's root, relative to this package.
const root = "../../.."

// fragmentMark, on the line before a ```go fence, marks a block that shows
// part of a program (it is not compiled).
const fragmentMark = "<!-- fragment -->"

// docs returns README.md and every Markdown file under docs/.
func docs(t *testing.T) []string {
	t.Helper()
	files := []string{filepath.Join(root, "README.md")}
	more, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	return append(files, more...)
}

var (
	linkRE    = regexp.MustCompile(`\[[^\]]*\]\(([^)\s]+)\)`)
	codeRE    = regexp.MustCompile("`[^`]*`") // inline code: no links inside
	headingRE = regexp.MustCompile(`^#{1,6} +(.*)$`)
)

// slug is the anchor GitHub gives a heading: lower case, punctuation
// dropped except '-' and '_', spaces as '-'.
func slug(heading string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(strings.TrimSpace(heading)) {
		switch {
		case r == ' ':
			b.WriteByte('-')
		case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r):
			b.WriteRune(r)
		}
	}
	return b.String()
}

// anchors returns the heading anchors of a Markdown file (outside code
// blocks).
func anchors(t *testing.T, path string) map[string]bool {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]bool{}
	fenced := false
	for line := range strings.SplitSeq(string(b), "\n") {
		if strings.HasPrefix(line, "```") {
			fenced = !fenced
			continue
		}
		if m := headingRE.FindStringSubmatch(line); m != nil && !fenced {
			s := slug(strings.ReplaceAll(m[1], "`", ""))
			for n := 1; out[s]; n++ { // GitHub numbers repeated headings
				s = slug(m[1]) + "-" + string(rune('0'+n))
			}
			out[s] = true
		}
	}
	return out
}

// TestLinks checks that every relative link of README.md and docs/*.md
// names a file or directory that exists, and a heading of it where the link
// has an anchor.
func TestLinks(t *testing.T) {
	for _, doc := range docs(t) {
		b, err := os.ReadFile(doc)
		if err != nil {
			t.Fatal(err)
		}
		fenced := false
		for i, line := range strings.Split(string(b), "\n") {
			if strings.HasPrefix(line, "```") {
				fenced = !fenced
			}
			if fenced {
				continue
			}
			for _, m := range linkRE.FindAllStringSubmatch(codeRE.ReplaceAllString(line, ""), -1) {
				target := m[1]
				if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
					continue
				}
				file, anchor, _ := strings.Cut(target, "#")
				path := doc
				if file != "" {
					path = filepath.Join(filepath.Dir(doc), file)
					if _, err := os.Stat(path); err != nil {
						t.Errorf("%s:%d: link %q: %v", doc, i+1, target, err)
						continue
					}
				}
				if anchor != "" && strings.HasSuffix(path, ".md") && !anchors(t, path)[anchor] {
					t.Errorf("%s:%d: link %q: %s has no heading #%s", doc, i+1, target, path, anchor)
				}
			}
		}
	}
}

// goBlock is a ```go block of a Markdown file.
type goBlock struct {
	line     int // of the opening fence
	code     string
	fragment bool
}

// goBlocks returns the Go blocks of the Markdown file path.
func goBlocks(t *testing.T, path string) []goBlock {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []goBlock
	var cur *goBlock
	prev := ""
	sc := bufio.NewScanner(bytes.NewReader(b))
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		switch {
		case cur == nil && strings.TrimSpace(line) == "```go":
			cur = &goBlock{line: n, fragment: strings.TrimSpace(prev) == fragmentMark}
		case cur != nil && strings.TrimSpace(line) == "```":
			out = append(out, *cur)
			cur = nil
		case cur != nil:
			cur.code += line + "\n"
		}
		prev = line
	}
	return out
}

// TestReadmeGoBlocksCompile builds every Go block of README.md that is not
// marked as a fragment: each is a whole program (package main), built
// against this module.
func TestReadmeGoBlocksCompile(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: builds programs with the go command")
	}
	gobin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("the go command is not in PATH")
	}
	blocks := goBlocks(t, filepath.Join(root, "README.md"))
	if len(blocks) == 0 {
		t.Fatal("README.md has no Go block")
	}
	// Inside the module, so that its packages resolve; removed at the end.
	// The leading "_" keeps it out of ./... patterns: another package's test
	// (the layering check's go list ./...) may walk the tree meanwhile.
	dir, err := os.MkdirTemp(".", "_readme_blocks_")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	var pkgs []string
	for i, bl := range blocks {
		if bl.fragment {
			continue
		}
		if !strings.HasPrefix(bl.code, "package ") {
			t.Errorf("README.md:%d: a Go block that is neither a whole program nor marked %s", bl.line, fragmentMark)
			continue
		}
		p := filepath.Join(dir, fmt.Sprintf("b%02d", i))
		if err := os.Mkdir(p, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(p, "main.go"), []byte(bl.code), 0o644); err != nil {
			t.Fatal(err)
		}
		pkgs = append(pkgs, "./"+filepath.ToSlash(p))
	}
	if len(pkgs) == 0 {
		return
	}
	cmd := exec.Command(gobin, append([]string{"vet"}, pkgs...)...)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("README's Go blocks do not build (go vet %s): %v\n%s", strings.Join(pkgs, " "), err, out)
	}
}
