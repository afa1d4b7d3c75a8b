package examplecheck

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// mustCheck are the methods whose error an example must not drop when it
// calls them as a statement or in a defer.
var mustCheck = map[string]bool{
	"Close": true, "Stop": true, "Shutdown": true, "Free": true, "Terminate": true,
	"Activate": true, "Deactivate": true, "Reactivate": true, "Start": true,
	"Send": true, "Drain": true, "Connect": true, "Flush": true,
}

// TestExamplesHandleEveryError walks every Example function of the module
// and fails on a dropped error: a blank identifier assigned a call's
// result, or a call of a method in mustCheck whose result is thrown away
// (a statement or a defer).
func TestExamplesHandleEveryError(t *testing.T) {
	root, err := filepath.Abs("../../..")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
		t.Fatalf("module root: %v", err)
	}
	fset := token.NewFileSet()
	examples := 0
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && path != root && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata") {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, 0)
		if err != nil {
			return err
		}
		for _, decl := range f.Decls {
			fn, ok := decl.(*ast.FuncDecl)
			if !ok || fn.Recv != nil || !strings.HasPrefix(fn.Name.Name, "Example") || fn.Body == nil {
				continue
			}
			examples++
			for _, bad := range dropped(fn.Body) {
				rel, _ := filepath.Rel(root, fset.Position(bad).Filename)
				t.Errorf("%s:%d: %s drops an error", rel, fset.Position(bad).Line, fn.Name.Name)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if examples < 10 {
		t.Fatalf("found %d examples: is the walk rooted at the module?", examples)
	}
}

// dropped returns where body drops an error.
func dropped(body *ast.BlockStmt) []token.Pos {
	var out []token.Pos
	ast.Inspect(body, func(n ast.Node) bool {
		switch s := n.(type) {
		case *ast.AssignStmt:
			if len(s.Rhs) != 1 {
				return true
			}
			if _, ok := s.Rhs[0].(*ast.CallExpr); !ok {
				return true
			}
			// An error comes last: a blank there drops it.
			if id, ok := s.Lhs[len(s.Lhs)-1].(*ast.Ident); ok && id.Name == "_" {
				out = append(out, s.Pos())
			}
		case *ast.ExprStmt:
			if checked(s.X) {
				out = append(out, s.Pos())
			}
		case *ast.DeferStmt:
			if checked(s.Call) {
				out = append(out, s.Pos())
			}
		}
		return true
	})
	return out
}

// checked reports whether e calls a method or function in mustCheck that
// returns an error: without types, one that takes arguments (a context, a
// message) or releases something (a ring's Activate() returns nothing).
func checked(e ast.Expr) bool {
	call, ok := e.(*ast.CallExpr)
	if !ok {
		return false
	}
	var name string
	switch f := call.Fun.(type) {
	case *ast.SelectorExpr:
		name = f.Sel.Name
	case *ast.IndexExpr: // a generic call such as stream.Connect[T]
		if sel, ok := f.X.(*ast.SelectorExpr); ok {
			name = sel.Sel.Name
		}
	}
	if !mustCheck[name] {
		return false
	}
	switch name {
	case "Close", "Stop", "Shutdown", "Free", "Flush":
		return true
	}
	return len(call.Args) > 0
}
