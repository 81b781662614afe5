package snapshots

// BoxAction is what a caller asks to do with a box itself, beside MayAct's
// actions on its snapshots.
type BoxAction string

// The box actions of the Security model (README).
const (
	// BoxFromTemplate makes a box from a box template the owner made, by name.
	BoxFromTemplate BoxAction = "make from a template"
	// BoxFromParts makes a box from a backend, kind, source, host or command
	// the caller gives itself.
	BoxFromParts BoxAction = "make from parts"
	// BoxAdopt takes over a guest or a folder that exists already.
	BoxAdopt BoxAction = "adopt"
	// BoxRelease releases a box: its guest or folder is destroyed.
	BoxRelease BoxAction = "release"
)

// MayBox is the one rule for making, adopting and releasing boxes (the
// README's Security model), beside MayAct: the person does all of it; an
// agent makes a box only from a box template, by name, into its own thread,
// and releases only its own thread's boxes; only the person adopts; boxsnap
// itself only releases. b is the box released, or nil. A box of another
// thread reads exactly as one that does not exist.
func MayBox(c Caller, act BoxAction, b *Box) error {
	switch c.Kind {
	case CallerOwner, CallerCLI:
		return nil
	case CallerSystem:
		if act == BoxRelease {
			return nil
		}
		return refusal(CodeForbidden, notByItselfWords(string(act)))
	case CallerAgent:
	default:
		return refusal(CodeForbidden, SignInWords)
	}
	switch act {
	case BoxFromTemplate:
		return nil
	case BoxFromParts:
		return AgentLeaveOut("command")
	case BoxAdopt:
		return refusal(CodeForbidden, onlyPersonAdoptsWords)
	case BoxRelease:
		if b == nil {
			return BoxNotFound("")
		}
		if b.State == BoxReleased || b.ThreadID == nil || *b.ThreadID != c.Thread {
			if agentAccess(c.Thread, b) == accessRunsOn && b.State != BoxReleased {
				// It sees the box it runs on, so it may read why.
				return refusal(CodeForbidden, onlyThreadReleasesWords(b.Name))
			}
			return BoxNotFound(b.Name)
		}
		return nil
	}
	return refusal(CodeForbidden, NotAllowedWords)
}

// AgentLeaveOut is the one home of the words refusing a field an agent may
// not send when it asks for a box.
func AgentLeaveOut(field string) *Refusal {
	return refusal(CodeForbidden, agentLeavesOutWords(field))
}
