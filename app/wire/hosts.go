package wire

import "github.com/boxsnap/boxsnap/app/snapshots/hosts"

// HostsAnswer is GET /hosts: every host that ran boxsnap on this database,
// and the one that answered.
type HostsAnswer struct {
	Hosts []hosts.Host `json:"hosts"`
	This  string       `json:"this"`
}

// HostAnswer is POST /hosts/{host}/gone: the host, marked gone.
type HostAnswer = hosts.Host

// MoveBody is POST /boxes/{box}/move's body: the host the box goes to.
type MoveBody struct {
	Host string `json:"host"`
}

// TakeOverBody is POST /hosts/{host}/takeover's body: the host the boxes go
// to; left out, the host that answers.
type TakeOverBody struct {
	To string `json:"to,omitempty"`
}

// TakeOverAnswer is what a takeover did: the boxes it carried over and the
// ones it left, each with why.
type TakeOverAnswer = hosts.TakeOverResult
