// Package shape measures the shape of boxsnap's Go code, for the command
// tools/shape and the root test TestTheCoreKeepsItsShape: for every package
// (its hand-written files only: no _test.go file, no generated file such as
// sqlc's app/store/db), its lines, the methods of each of its types, and the
// arrows between its files and how many of them run back up; the circles
// between packages; and the longest functions.
//
// An arrow is file A using a name declared in file B of the same package
// (a function, type, variable, constant, method or field; go/types resolves
// each identifier, so a method call counts for the file that declares the
// method). Arrows are counted once per pair of files, and a file using its
// own names draws none. Each file stands on a floor of its own: files that
// use each other, directly or through others (a strongly connected
// component of the arrows), stand together above every file they use, and
// among themselves in the order that leaves the fewest arrows pointing up
// that a greedy search finds (Eades, Lin and Smyth: a file that uses none
// of the rest goes down, one that none of the rest uses goes up, else the
// one that uses most and is used least goes up). An arrow runs back up when
// it goes to a file on a higher floor: to read the lower file, a reader
// must first climb to the higher one.
//
// It reads the code through `go list` (the export data of every imported
// package) and the standard library's go/parser, go/ast and go/types. It
// imports nothing of boxsnap.
package shape
