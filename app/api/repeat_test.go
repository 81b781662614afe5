package api_test

import (
	"testing"
)

// opID is the operation ID of an operation's REST answer.
func (a answer) opID() string {
	op, _ := a.JSON["operation"].(map[string]any)
	id, _ := op["id"].(string)
	return id
}

// TestRepeatedDeleteAnswersItsResult: a change repeated with its request ID
// answers the first one's operation and words, though the first changed
// what the repeat names: the delete's snapshot is gone, the fork's and the
// keep's snapshot deleted since, the box released.
func TestRepeatedDeleteAnswersItsResult(t *testing.T) {
	t.Parallel()
	e := setup(t)
	e.Box(t, ownerCaller(), "amber-fox")
	take := func(name string) string {
		t.Helper()
		a := e.call(t, "POST", "/boxes/amber-fox/snapshots?wait=true", e.owner, map[string]any{"name": name}).must(t, 200)
		op, _ := a.JSON["operation"].(map[string]any)
		id, _ := op["target"].(string)
		if id == "" {
			t.Fatalf("take answered %s", a.Raw)
		}
		return id
	}
	first := take("first")
	take("second")

	// The delete, by name, then its repeat: the same operation, done, in
	// the same words; by the snapshot's ID too, and without waiting.
	a := e.call(t, "DELETE", "/boxes/amber-fox/snapshots/first?request=d-1&wait=true", e.owner, nil).must(t, 200)
	contains(t, a.str("message"), "Deleted ‘first’")
	for _, path := range []string{
		"/boxes/amber-fox/snapshots/first?request=d-1&wait=true",
		"/boxes/amber-fox/snapshots/first?request=d-1",
		"/boxes/amber-fox/snapshots/" + first + "?request=d-1",
	} {
		again := e.call(t, "DELETE", path, e.owner, nil).must(t, 200)
		if again.opID() != a.opID() || again.str("message") != a.str("message") {
			t.Fatalf("DELETE %s answered %s, the first %s", path, again.Raw, a.Raw)
		}
	}
	// Without the request ID, or with it on another snapshot, it is not a
	// repeat: the gone snapshot is not found, the other is refused.
	e.call(t, "DELETE", "/boxes/amber-fox/snapshots/first", e.owner, nil).must(t, 404)
	refused := e.call(t, "DELETE", "/boxes/amber-fox/snapshots/second?request=d-1", e.owner, nil).must(t, 409)
	contains(t, refused.errorWords(), "The request ID d-1 was used for another operation (delete ")

	// A keep and a fork, repeated after their snapshot was deleted.
	take("third")
	kept := e.call(t, "POST", "/boxes/amber-fox/snapshots/third/keep?wait=true", e.owner, map[string]any{"request": "k-1"}).must(t, 200)
	forked := e.call(t, "POST", "/boxes/amber-fox/snapshots/third/fork?wait=true", e.owner, map[string]any{"name": "amber-fox-two", "request": "f-1"}).must(t, 200)
	e.call(t, "POST", "/boxes/amber-fox/snapshots/third/unkeep?wait=true", e.owner, nil).must(t, 200)
	e.call(t, "DELETE", "/boxes/amber-fox/snapshots/third?wait=true", e.owner, nil).must(t, 200)
	for _, c := range []struct {
		path  string
		body  map[string]any
		first answer
	}{
		{"/boxes/amber-fox/snapshots/third/keep", map[string]any{"request": "k-1"}, kept},
		{"/boxes/amber-fox/snapshots/third/fork", map[string]any{"name": "amber-fox-two", "request": "f-1"}, forked},
	} {
		again := e.call(t, "POST", c.path, e.owner, c.body).must(t, 200)
		if again.opID() != c.first.opID() {
			t.Fatalf("POST %s answered %s, the first %s", c.path, again.Raw, c.first.Raw)
		}
	}

	// An agent's delete through its tool, and its box's release.
	token, agent := e.agent(t, "Fix the sign-in flow")
	e.Box(t, agent, "brisk-lake")
	e.call(t, "POST", "/tools/box_snapshot", token, map[string]any{"box": "brisk-lake", "name": "spare"}).must(t, 200)
	args := map[string]any{"box": "brisk-lake", "snapshot": "spare", "request": "td-1"}
	d := e.call(t, "POST", "/tools/box_snapshot_delete", token, args).must(t, 200)
	contains(t, d.str("message"), "Deleted ‘spare’ of brisk-lake")
	if again := e.call(t, "POST", "/tools/box_snapshot_delete", token, args).must(t, 200); again.str("message") != d.str("message") {
		t.Fatalf("the repeated tool call answered %s, the first %s", again.Raw, d.Raw)
	}
	rel := e.call(t, "POST", "/boxes/brisk-lake/release?request=r-1&wait=true", token, nil).must(t, 200)
	if again := e.call(t, "POST", "/boxes/brisk-lake/release?request=r-1", token, nil).must(t, 200); again.opID() != rel.opID() {
		t.Fatalf("the repeated release answered %s, the first %s", again.Raw, rel.Raw)
	}
}
