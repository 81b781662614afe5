package api_test

import (
	"testing"
)

// TestReleaseDeleteKeptParam: "Release and delete it" is the person's
// alone, through ?deleteKept=true; a bad value changes nothing.
func TestReleaseDeleteKeptParam(t *testing.T) {
	t.Parallel()
	e := setup(t)
	token, agent := e.agent(t, "Tidy up")
	e.Box(t, agent, "amber-fox")
	e.call(t, "POST", "/boxes/amber-fox/release?deleteKept=maybe", e.owner, nil).must(t, 400)
	a := e.call(t, "POST", "/boxes/amber-fox/release?deleteKept=true", token, nil).must(t, 403)
	contains(t, string(a.Raw), "Only the person deletes what they kept.")
	if got := e.call(t, "GET", "/boxes/amber-fox", e.owner, nil).must(t, 200).str("state"); got != "ready" {
		t.Fatalf("after refused releases the box is %s", got)
	}
	e.call(t, "POST", "/boxes/amber-fox/release?deleteKept=true&wait=true", e.owner, nil).must(t, 200)
	if got := e.call(t, "GET", "/boxes/amber-fox", e.owner, nil).must(t, 200).str("state"); got != "released" {
		t.Fatalf("after “Release and delete it” the box is %s", got)
	}
}
