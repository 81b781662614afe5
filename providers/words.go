package providers

import "fmt"

// NoResetWords is the one home of why a snapshot taken without the identity
// reset neither forks nor is kept (section 9), and of what fixes it (the
// close-out: refresh the image and make the box again). It ends with a full
// stop.
func NoResetWords(box string) string {
	return fmt.Sprintf("Taken before %s's image had the identity reset: it could not be forked after a release. To fork or keep, refresh the image, make the box again from it and take a new snapshot.", box)
}
