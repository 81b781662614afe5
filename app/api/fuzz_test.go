package api_test

import (
	"testing"
)

// FuzzTools sends any body to any tool: no input gives a 5xx. In a normal
// go test it runs its seeds only; go test -fuzz=FuzzTools ./app/api
// explores.
func FuzzTools(f *testing.F) {
	e := setup(f)
	token, agent := e.agent(f, "Fuzz")
	e.Box(f, agent, "fuzz-box")
	seed := e.call(f, "POST", "/tools/box_snapshot", token, map[string]any{"box": "fuzz-box", "name": "seed"}).must(f, 200).str("snapshot")
	tools := []string{"box_snapshot", "box_snapshots", "box_restore", "box_snapshot_delete", "box_nothing", "box_fork"}
	for i, body := range []string{
		`{"box":"fuzz-box"}`,
		`{"box":"fuzz-box","pictures":true}`,
		`{"box":"fuzz-box","snapshot":"seed","replace":true,"request":"f1"}`,
		`{"box":"fuzz-box","snapshot":"` + seed + `"}`,
		`{}`,
		``,
		`null`,
		`[]`,
		`"box"`,
		`{"box":null}`,
		`{"box":"fuzz-box","name":"` + "\u00e9\u00e9" + `","note":"\ud800"}`,
		`{"box":"fuzz-box","snapshot":"snaaaaaaaaaaaa","replace":1}`,
		`{"box":"fuzz-box","memory":"true"}`,
		`{"box":"fuzz-box","name":"a\u0000b"}`,
		`{"box":"fuzz-box","request":"` + "\x7f" + `"}`,
		`{"box":"fuzz-box","box":"other"}`,
		`{"box":1e400}`,
		`{"box":"fuzz-box","snapshot":"../../etc/passwd","replace":true}`,
		`{"box":"bx000000000000","snapshot":"sn000000000000","replace":true}`,
		`{"box":"fuzz-box"`,
	} {
		f.Add(uint8(i), body)
	}
	// box_fork's own seeds: from a snapshot, from the box now, and what
	// names nothing or breaks the name rule.
	const fork = 5
	for _, body := range []string{
		`{"snapshot":"` + seed + `","name":"fuzz-fork"}`,
		`{"box":"fuzz-box","snapshot":"seed"}`,
		`{"box":"fuzz-box","request":"f2"}`,
		`{"box":"fuzz-box","name":"fuzz-box"}`,
		`{"snapshot":"seed"}`,
		`{"snapshot":"snzzzzzzzzzzzz"}`,
		`{"box":"fuzz-box","name":"Not A Name"}`,
		`{"box":"fuzz-box","name":"` + "été" + `"}`,
		`{"box":"fuzz-box","snapshot":"","name":""}`,
		`{"box":"fuzz-box","asMachine":true}`,
		`{"box":["fuzz-box"]}`,
		`{"snapshot":"../` + seed + `"}`,
		`{"box":"bx000000000000"}`,
	} {
		f.Add(uint8(fork), body)
	}
	f.Fuzz(func(t *testing.T, which uint8, body string) {
		tool := tools[int(which)%len(tools)]
		a := e.call(t, "POST", "/tools/"+tool, token, body)
		if a.Status >= 500 {
			t.Fatalf("%s with %q: status %d: %s", tool, body, a.Status, a.Raw)
		}
		if a.Status >= 400 && a.errorWords() == "" {
			t.Fatalf("%s with %q: status %d without words: %s", tool, body, a.Status, a.Raw)
		}
	})
}
