package sql

import (
	"embed"
	"fmt"
	"io/fs"
	"regexp"
	"strings"
)

//go:embed queries/*.sql
var queryFiles embed.FS

var nameLine = regexp.MustCompile(`^-- name: ([A-Za-z][A-Za-z0-9]*)(\s+:[a-z]+)?\s*$`)

// Queries parses every file in queries/ into its named queries, for
// store.Q while the callers move to the typed functions sqlc generates into
// app/store/db. A query starts at a line "-- name: Name :kind" and runs to the next such line or the end
// of the file. A name given twice is an error, so the store's start fails
// rather than a request.
func Queries() (map[string]string, error) {
	out := map[string]string{}
	err := fs.WalkDir(queryFiles, "queries", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := queryFiles.ReadFile(path)
		if err != nil {
			return err
		}
		var name string
		var body strings.Builder
		flush := func() error {
			if name == "" {
				return nil
			}
			if _, dup := out[name]; dup {
				return fmt.Errorf("%s: query %s is named twice", path, name)
			}
			out[name] = strings.TrimSpace(body.String())
			body.Reset()
			return nil
		}
		for _, line := range strings.Split(string(b), "\n") {
			if m := nameLine.FindStringSubmatch(line); m != nil {
				if err := flush(); err != nil {
					return err
				}
				name = m[1]
				continue
			}
			if name != "" {
				body.WriteString(line)
				body.WriteByte('\n')
			}
		}
		return flush()
	})
	if err != nil {
		return nil, fmt.Errorf("sql queries: %w", err)
	}
	return out, nil
}
