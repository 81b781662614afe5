package apply

import (
	"errors"
	"fmt"
	"io/fs"

	"github.com/boxsnap/boxsnap/providers/local/confined"
)

// HashBeneath hashes the box's file rel, opened beneath the box's folder
// through no link and non-blocking (openRegular). One gone, reached only
// through a link, no longer a regular file, or not the file want names (when
// set) answers an error that is fs.ErrNotExist: it is not the file read.
func (b *Writer) HashBeneath(root *confined.Beneath, rel string, want *confined.FileID) (string, int64, error) {
	f, _, err := root.OpenRegular(rel, want)
	if err != nil {
		if confined.GoneOrSwapped(err) || errors.Is(err, confined.ErrNotRegular) || errors.Is(err, confined.ErrNotScanned) {
			return "", 0, fmt.Errorf("%w: %w", fs.ErrNotExist, err)
		}
		return "", 0, err
	}
	defer f.Close()
	return b.HashFile(f)
}
