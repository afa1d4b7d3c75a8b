package layering

import (
	"fmt"
	"slices"
	"strings"
)

// examplesDir holds the programs a user copies out of the module.
const examplesDir = "examples"

// internalImports returns a problem for each import of an internal
// package of the module by the non-test code of a package under
// examplesDir: a user who copies the program out of the module cannot
// import it. It also returns how many packages it found under examplesDir.
func internalImports(module string, pkgs []pkg) (problems []string, examples int) {
	for _, p := range pkgs {
		if p.rel != examplesDir && !strings.HasPrefix(p.rel, examplesDir+"/") {
			continue
		}
		examples++
		for _, imp := range p.imports {
			rel, ok := strings.CutPrefix(imp, module+"/")
			if ok && slices.Contains(strings.Split(rel, "/"), "internal") {
				problems = append(problems, fmt.Sprintf("%s imports %s: a program under %s/ is what a user copies out of the module, where an internal package cannot be imported; use the module's public packages and the standard library",
					p.rel, imp, examplesDir))
			}
		}
	}
	return problems, examples
}
