package layering

import (
	"strings"
	"testing"
)

// TestExamplesImportOnlyPublicPackages: no program under examples/
// imports an internal package of the module (its tests may).
func TestExamplesImportOnlyPublicPackages(t *testing.T) {
	module, pkgs := goList(t)
	problems, examples := internalImports(module, pkgs)
	if examples == 0 {
		t.Fatalf("go list ./... lists no package under %s/: is the check rooted at the module?", examplesDir)
	}
	for _, p := range problems {
		t.Error(p)
	}
}

// TestInternalImports: an import of the module's internal packages, at
// the root or deeper, by a package under examples/ is a problem; public
// packages, other modules and packages outside examples/ are not.
func TestInternalImports(t *testing.T) {
	pkgs := []pkg{
		{rel: "examples/a", imports: imports("fmt", "c", "sub/internalx", "example.com/other/internal/x")},
		{rel: "examples/b/cmd", imports: imports("internal/help", "sub/internal/deep")},
		{rel: "examplesx", imports: imports("internal/help")},
		{rel: "cmd/tool", imports: imports("internal/help")},
	}
	got, examples := internalImports(m, pkgs)
	if examples != 2 || len(got) != 2 ||
		!strings.HasPrefix(got[0], "examples/b/cmd imports example.com/m/internal/help: ") ||
		!strings.HasPrefix(got[1], "examples/b/cmd imports example.com/m/sub/internal/deep: ") {
		t.Fatalf("%d example packages, problems:\n%s", examples, strings.Join(got, "\n"))
	}
}
