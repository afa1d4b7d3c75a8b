package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"go/importer"
	"go/token"
	"go/types"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
)

// listed is what go list says of one package.
type listed struct {
	ImportPath string
	Name       string
	Export     string
	Standard   bool
	DepOnly    bool
	Module     *struct{ Path string }
	Error      *struct{ Err string }
}

// moduleRoot returns the directory of the main module's go.mod.
func moduleRoot() (string, error) {
	out, err := exec.Command("go", "env", "GOMOD").Output()
	if err != nil {
		return "", fmt.Errorf("go env GOMOD: %w", err)
	}
	gomod := strings.TrimSpace(string(out))
	if gomod == "" || gomod == os.DevNull {
		return "", errors.New("not inside a Go module")
	}
	return filepath.Dir(gomod), nil
}

// goList runs go list -export -deps in dir: every package of patterns and
// its dependencies, each with its export data file (building what the
// build cache lacks).
func goList(dir string, patterns ...string) ([]listed, error) {
	args := append([]string{"list", "-e", "-export", "-deps", "-json=ImportPath,Name,Export,Standard,DepOnly,Module,Error"}, patterns...)
	cmd := exec.Command("go", args...)
	cmd.Dir = dir
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("go %s: %w\n%s", strings.Join(args, " "), err, stderr.Bytes())
	}
	var pkgs []listed
	dec := json.NewDecoder(bytes.NewReader(out))
	for {
		var p listed
		if err := dec.Decode(&p); err == io.EOF {
			break
		} else if err != nil {
			return nil, fmt.Errorf("go list output: %w", err)
		}
		if p.Error != nil {
			return nil, fmt.Errorf("package %s: %s", p.ImportPath, p.Error.Err)
		}
		pkgs = append(pkgs, p)
	}
	return pkgs, nil
}

// public reports whether a user can import the package: not a main
// package, not under an internal/ directory, not under examples/ (the
// programs a user copies, not library API).
func public(p listed, module string) bool {
	if p.Name == "main" || p.Standard || p.DepOnly || p.Module == nil || p.Module.Path != module {
		return false
	}
	rel := strings.TrimPrefix(strings.TrimPrefix(p.ImportPath, module), "/")
	for _, seg := range strings.Split(rel, "/") {
		if seg == "internal" || seg == "testdata" {
			return false
		}
	}
	return rel != "examples" && !strings.HasPrefix(rel, "examples/")
}

// Dump returns the sorted API lines of the public packages matched by
// patterns in the module at dir.
func Dump(dir string, patterns ...string) ([]string, error) {
	return dump(dir, public, patterns...)
}

// dump returns the sorted API lines of the packages matched by patterns
// that keep keeps (given the main module's path).
func dump(dir string, keep func(p listed, module string) bool, patterns ...string) ([]string, error) {
	pkgs, err := goList(dir, patterns...)
	if err != nil {
		return nil, err
	}
	module, err := mainModule(pkgs)
	if err != nil {
		return nil, err
	}
	exports := make(map[string]string, len(pkgs))
	for _, p := range pkgs {
		exports[p.ImportPath] = p.Export
	}
	fset := token.NewFileSet()
	imp := importer.ForCompiler(fset, "gc", func(path string) (io.ReadCloser, error) {
		f, ok := exports[path]
		if !ok || f == "" {
			return nil, fmt.Errorf("no export data for %s", path)
		}
		return os.Open(f)
	})
	var lines []string
	for _, p := range pkgs {
		if !keep(p, module) {
			continue
		}
		tp, err := imp.Import(p.ImportPath)
		if err != nil {
			return nil, fmt.Errorf("reading %s's export data: %w", p.ImportPath, err)
		}
		lines = append(lines, packageAPI(tp)...)
	}
	slices.Sort(lines)
	return slices.Compact(lines), nil
}

// mainModule returns the module of the packages go list matched (not
// DepOnly).
func mainModule(pkgs []listed) (string, error) {
	for _, p := range pkgs {
		if !p.DepOnly && p.Module != nil {
			return p.Module.Path, nil
		}
	}
	return "", errors.New("go list matched no package of a module")
}

// packageAPI returns the API lines of one package.
func packageAPI(p *types.Package) []string {
	w := newWriter(p)
	prefix := "pkg " + p.Path() + ", "
	var lines []string
	add := func(s string) { lines = append(lines, prefix+s) }
	scope := p.Scope()
	for _, name := range scope.Names() {
		obj := scope.Lookup(name)
		if !obj.Exported() {
			continue
		}
		switch o := obj.(type) {
		case *types.Const:
			add(w.constant(o))
		case *types.Var:
			add("var " + o.Name() + " " + w.typ(o.Type()))
		case *types.Func:
			sig := o.Type().(*types.Signature)
			add("func " + o.Name() + w.typeParams(sig.TypeParams()) + w.signature(sig))
		case *types.TypeName:
			for _, l := range w.typeName(o) {
				add(l)
			}
		}
	}
	return lines
}
