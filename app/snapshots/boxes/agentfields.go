package boxes

import "github.com/boxsnap/boxsnap/app/snapshots"

// agentBoxFields refuses, in words, the first field of req an agent may not
// give: everything but the box's name and its template's name.
func agentBoxFields(req snapshots.BoxRequest) error {
	for _, f := range []struct {
		name string
		set  bool
	}{
		{"command", req.Command != ""}, {"adopt", req.Adopt != ""}, {"backend", req.Backend != ""},
		{"host", req.Host != ""}, {"kind", req.Kind != ""}, {"thread", req.Thread != ""},
		{"hasScreen", req.HasScreen}, {"screenUrl", req.ScreenURL != ""},
	} {
		if f.set {
			return snapshots.AgentLeaveOut(f.name)
		}
	}
	if req.Template == "" {
		return &snapshots.Refusal{Code: snapshots.CodeInvalid, Words: agentNamesTemplateWords}
	}
	return nil
}
