// Package multiproc holds the cluster tests that run each member in a
// process of its own: the failover test kills one with SIGKILL. Each child
// is this package's test binary started again with RINGACTOR_MEMBER_CHILD
// set; it hosts the built-in kinds and the test's whoami kind. One member
// per process also keeps these tests clear of the data race Proto.Actor's
// remote has when two members start in one process, so they run under
// -race with the rest of the suite.
package multiproc
