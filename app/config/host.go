package config

import (
	"os"
	"regexp"
)

// hostNameRE is a host's name: letters, digits, dots, dashes and
// underscores, as a hostname is, so it is safe in a River queue's name and
// on a page.
var hostNameRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,62}$`)

// HostNameProblem says what is wrong with name as a host's name, "" when
// nothing is.
func HostNameProblem(name string) string {
	if !hostNameRE.MatchString(name) {
		return "must be 1 to 63 letters, digits, dots, dashes or underscores, starting with a letter or digit"
	}
	return ""
}

// hostname is the machine's hostname, the default host name; "localhost"
// when the system has none.
func hostname() string {
	h, err := os.Hostname()
	if err != nil || HostNameProblem(h) != "" {
		return "localhost"
	}
	return h
}
