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
// own names draws none. Each file stands on a floor: files that use each
// other, directly or through others (a strongly connected component of the
// arrows), share one floor, and a floor is one above the highest floor
// that its files use (floor 1 uses no other file). An arrow runs back up
// when it goes to a file on the same or a higher floor: it lies inside a
// cycle of files, so neither file can be read without the other.
//
// It reads the code through `go list` (the export data of every imported
// package) and the standard library's go/parser, go/ast and go/types. It
// imports nothing of boxsnap.
package shape
