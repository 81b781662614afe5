package providers

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"
)

// AccessText is the box's access file as boxsnap writes it on every backend
// that has one: who the box is and who may reach it now, one KEY=value a
// line.
func AccessText(a Access) []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, "BOXSNAP_INSTALL=%s\n", a.Box.Install)
	fmt.Fprintf(&b, "BOXSNAP_BOX=%s\n", a.Box.ID)
	fmt.Fprintf(&b, "BOXSNAP_BOX_NAME=%s\n", a.Box.Name)
	fmt.Fprintf(&b, "BOXSNAP_THREAD=%s\n", a.Thread)
	fmt.Fprintf(&b, "BOXSNAP_THREADS=%s\n", strings.Join(a.Threads, ","))
	fmt.Fprintf(&b, "BOXSNAP_GENERATION=%s\n", strconv.Itoa(a.Generation))
	return b.Bytes()
}
