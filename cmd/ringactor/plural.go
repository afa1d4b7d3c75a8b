package main

import "fmt"

// plural is "N thing" for N = 1 and "N things" otherwise ("1 row",
// "0 rows", "16 iterations").
func plural(n int64, thing string) string {
	if n == 1 {
		return "1 " + thing
	}
	return fmt.Sprintf("%d %ss", n, thing)
}
