#!/usr/bin/env bash
# The test suite: what README documents and what CI (.ci/run) calls.
#
#   ./test.sh            every package under the race detector, then the
#                        packages with concurrency of their own without it
#   ./test.sh -short     the same, passing -short to go test
#
# Output: each package's result, the output of failed tests, every skipped
# test with its reason, and one closing "N passed, N failed, N skipped" line
# per step. Exit status: non-zero when anything failed.
set -uo pipefail
cd "$(dirname "$0")"

summary() { go run ./internal/testutil/testsummary/cmd/testsummary; }

status=0
step() { # step TITLE go-test-args...
  echo
  echo "== $1"
  shift
  go test -count=1 -json "$@" 2>&1 | summary
  local rc=("${PIPESTATUS[@]}")
  [ "${rc[0]}" = 0 ] && [ "${rc[1]}" = 0 ] || status=1
}

step "go test -race -count=1 ./..." -race "$@" ./...

# The second step runs without -race what has timing and concurrency of its
# own: the race detector slows every memory access ~5-10x and changes the
# interleavings a ring, the device pump, device epochs, the stream graph and
# the cluster see, so a defect that shows only at full speed (a starved ring,
# a lost wake-up) would pass the first step. It also runs what the race
# detector makes meaningless: allocation pins (sync.Pool drops items at
# random under -race, e.g. messages' TestEncodeAllocatesOnlyOutput, internal/wire's
# TestPackFromAllocs, compute's
# TestExecuteAllocs) and the
# in-process cluster tests: cluster/*_test.go files built with
# `//go:build !race` start several Proto.Actor members in one process, and
# Proto.Actor's remote.Start calls grpclog.SetLoggerV2 while the first
# member's gRPC server reads the logger, a race inside the dependency that
# -race reports on every run. cluster/multiproc's churn test (//go:build
# !race: a roll of member processes under load is more than two cores carry
# with -race) runs here in its CI size (4 members, 2 clients, 100
# identities, 2 SIGKILLs; about 25 s). README's "Cluster" section gives the
# full run. internal/apidump's TestAPIFileCurrent (//go:build !race) only
# type-checks the module, which the race detector slows ~3x for nothing.
step "go test -count=1 ./messages/ ./internal/wire/ ./internal/apidump/ ./compute/ ./pagerank/ ./gpu/... ./actors/... ./stream/... ./cluster/... (without -race: see test.sh)" \
  "$@" ./messages/ ./internal/wire/ ./internal/apidump/ ./compute/ ./pagerank/ ./gpu/... ./actors/... ./stream/... ./cluster/...

exit "$status"
