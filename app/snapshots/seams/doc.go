// Package seams builds every seam of the core over the kernel and wires
// them to each other: the keeps, the boxes, the take, the restores, the
// fork, the sweeps, the contents, the approvals, the pictures and the
// heads, each made once, in the order their kinds of operation must be
// registered with the kernel's engine (before River's workers start), and
// each given the others it reaches through its small interfaces. app/boot,
// app/coretest and e2e all call New, so the wiring has one home.
//
// It must never import app/web, app/api, app/cli, jobs, app/boot,
// app/coretest, app/dbtest or a provider's subpackage: what serves the
// seams imports it, never the other way round.
package seams
