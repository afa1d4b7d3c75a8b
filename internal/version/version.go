// Package version holds ringactor's release version, the one CHANGELOG.md's
// latest release heading names and `ringactor version` prints.
//
// Builds from a work tree (and with -buildvcs=false) report the module
// version "(devel)", and a git tag may not travel with a copy of the
// source, so the release is a constant here. A test keeps it equal to
// CHANGELOG.md's newest "## [x.y.z]" heading: a release bumps both in
// one change.
package version

// Version is the release this source tree is: CHANGELOG.md's latest
// "## [x.y.z] - date" heading, without a leading "v" (the git tag is
// "v" + Version).
const Version = "0.1.0"
