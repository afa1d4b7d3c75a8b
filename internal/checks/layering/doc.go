// Package layering checks the module's imports against the package table
// of docs/DESIGN.md ("Packages and their layers"): every package has a
// row, a package imports only packages of lower layers (packages of one
// layer are rooms kept apart), only tests import a package of layer
// "tests", and no package imports what its row's "must not import" column
// names. The check is its test; the package has no API.
package layering
