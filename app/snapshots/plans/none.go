package plans

import "errors"

// errNoPlans answers every dry run of a nil *Plans: a caller that could
// not make its plans (it was given no core or no restores) refuses with
// an internal error, which it logs, rather than dereferencing the nil.
var errNoPlans = errors.New("plans: none were made: the core or its restores were not given")
