package local

import "github.com/boxsnap/boxsnap/providers/local/process"

// importUser gives the user the box of group runs as: what is imported
// belongs to the group's box, and so to its user.
func (b *Backend) importUser(group string) (process.RunAs, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	st, err := b.ReadState(group)
	if err != nil {
		return process.RunAs{}, err
	}
	return b.BoxUser(st.User)
}
