package pagerank

import _ "embed"

// KarateClubEdges is Zachary's karate club as an edge list: 34 nodes
// numbered 0–33 as in networkx's karate_club_graph, 78 friendships, each
// listed in both directions (see the file's header).
//
//go:embed karate.edges
var KarateClubEdges string

// KarateClub returns Zachary's karate club graph, parsed from
// KarateClubEdges.
func KarateClub() *Graph {
	g, err := ParseString(KarateClubEdges)
	if err != nil {
		panic("pagerank: embedded karate club: " + err.Error())
	}
	return g
}
