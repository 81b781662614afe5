package snapshots

// CallerKind says who asks.
type CallerKind string

// Who may ask for a change: the owner in the web app, the owner's CLI, an
// agent through its thread's token, boxsnap itself.
const (
	CallerOwner  CallerKind = "owner"
	CallerCLI    CallerKind = "cli"
	CallerAgent  CallerKind = "agent"
	CallerSystem CallerKind = "boxsnap"
)

// Caller is who asks for a change. An agent's thread always comes from its
// token, never from a parameter.
type Caller struct {
	Kind   CallerKind
	Thread string // the agent's thread
	Why    string // boxsnap's reason, for CallerSystem
}

// Owner is the signed-in owner.
func Owner() Caller { return Caller{Kind: CallerOwner} }

// CLI is the owner through the boxsnap command.
func CLI() Caller { return Caller{Kind: CallerCLI} }

// Agent is the agent of a thread.
func Agent(thread string) Caller { return Caller{Kind: CallerAgent, Thread: thread} }

// System is boxsnap itself, for why.
func System(why string) Caller { return Caller{Kind: CallerSystem, Why: why} }

// IsPerson reports whether the caller is the person (the owner, in the web
// app or through the CLI).
func (c Caller) IsPerson() bool { return c.Kind == CallerOwner || c.Kind == CallerCLI }

// ByKind is how a record names the caller.
func (c Caller) ByKind() string {
	switch c.Kind {
	case CallerOwner:
		return "owner"
	case CallerCLI:
		return "cli"
	case CallerAgent:
		return "agent"
	default:
		return "boxsnap"
	}
}

func (c Caller) thread() *string {
	if c.Kind == CallerAgent {
		t := c.Thread
		return &t
	}
	return nil
}

// CallerOf is the caller that asked for an operation, as recorded on it.
func CallerOf(op *Operation) Caller {
	switch op.ByKind {
	case "owner":
		return Owner()
	case "cli":
		return CLI()
	case "agent":
		if op.ByThreadID != nil {
			return Agent(*op.ByThreadID)
		}
	}
	return System("")
}
