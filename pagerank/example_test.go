package pagerank_test

import (
	"context"
	"fmt"
	"log"

	"github.com/ringactor/ringactor/pagerank"
)

// Rank the members of Zachary's karate club: the instructor (0) and the
// administrator (33) lead.
func ExampleRun() {
	g, err := pagerank.ParseString(pagerank.KarateClubEdges) // or ParseFile("edges.txt")
	if err != nil {
		log.Fatal(err)
	}
	res, err := pagerank.Run(context.Background(), g, pagerank.Options{
		Damping: 0.85, // the defaults, spelled out
		Tol:     1e-6,
		MaxIter: 100,
	})
	if err != nil {
		log.Fatal(err)
	}
	for _, r := range pagerank.Top(g, res.Ranks, 3) {
		fmt.Printf("%s\t%.4f\n", r.Name, r.Rank)
	}
	fmt.Println("iterations:", res.Iterations, "converged:", res.Converged)
	// Output:
	// 33	0.1009
	// 0	0.0970
	// 32	0.0717
	// iterations: 21 converged: true
}
