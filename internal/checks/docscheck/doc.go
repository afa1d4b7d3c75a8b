// Package docscheck holds the checks of the repository's documentation:
// every relative link of README.md and docs/*.md resolves (files and
// headings), and every Go block of README.md compiles or is marked as a
// fragment. The checks are its tests; the package has no API.
package docscheck
