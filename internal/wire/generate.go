package wire

// ringactor_wire.pb.go is generated from ringactor_wire.proto with Debian's protoc and the
// protoc-gen-go version pinned in WIRE_INSTALL.txt; TestWireProtoInSync
// checks that the committed file matches.
//go:generate protoc --go_out=. --go_opt=paths=source_relative ringactor_wire.proto
