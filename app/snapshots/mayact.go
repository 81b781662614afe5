package snapshots

// Action is what a caller asks to do.
type Action string

// The actions a permission is asked for, and the ones the pages add.
const (
	ActSee     Action = "see"
	ActTake    Action = "take"
	ActRestore Action = "restore"
	ActFork    Action = "fork"
	ActDelete  Action = "delete"
	ActKeep    Action = "keep"
	ActUnkeep  Action = "unkeep"
	ActRename  Action = "rename"
	ActNote    Action = "note"
	ActPicture Action = "picture"
	ActRelease Action = "release"
	ActExport  Action = "export"
	ActImport  Action = "import"
	ActShare   Action = "share"
)

// boxAccess says how an agent's thread reaches a box.
type boxAccess int

const (
	accessNone   boxAccess = iota
	accessOwnBox           // a box of the thread that the thread does not run on
	accessRunsOn           // the box the thread runs on (an execution machine for it)
)

func agentAccess(thread string, b *Box) boxAccess {
	for _, w := range b.Presence.Workspaces {
		if w.Thread == thread && w.RunsOn {
			return accessRunsOn
		}
	}
	if b.ThreadID != nil && *b.ThreadID == thread {
		return accessOwnBox
	}
	return accessNone
}

// MayAct is the one permission check: whether caller may do act on box b, and
// on snapshot s where the action has one (s may be nil). Every path calls it
// at the moment of the change. A refusal for something the caller may not see
// reads as "not found", so guessing tells nothing.
func MayAct(c Caller, act Action, b *Box, s *Snapshot) error {
	switch c.Kind {
	case CallerOwner, CallerCLI:
		return nil // the person may do everything anyone may
	case CallerSystem:
		switch act {
		case ActSee, ActDelete, ActTake, ActRelease:
			return nil
		}
		return refusal(CodeForbidden, notByItselfWords(string(act)))
	case CallerAgent:
		// Moving snapshots is the person's. An export carries every file of a
		// box, secrets included, out of boxsnap; an import brings an archive
		// from outside in, a way in an agent's thread never has (it never
		// sends a host path or a backend reference); a share code hands a
		// copy to anyone who holds it.
		switch act {
		case ActExport:
			return refusal(CodeForbidden, onlyPersonExportsWords)
		case ActImport:
			return refusal(CodeForbidden, onlyPersonImportsWords)
		case ActShare:
			return refusal(CodeForbidden, onlyPersonSharesWords)
		}
	default:
		return refusal(CodeForbidden, SignInWords)
	}

	access := accessNone
	if b != nil {
		access = agentAccess(c.Thread, b)
		if b.State == BoxReleased {
			access = accessNone // a released box's kept snapshots are the person's alone
		}
	}
	if access == accessNone {
		if s != nil {
			return SnapshotNotFound(s.ID)
		}
		if b != nil {
			return BoxNotFound(b.Name)
		}
		return BoxNotFound("")
	}
	if s != nil && !agentSees(c.Thread, access, s) {
		return SnapshotNotFound(s.ID)
	}
	if s != nil && s.Kept() {
		// A kept snapshot is the person's from the moment it is kept: the
		// agent sees it, and nothing more.
		switch act {
		case ActRestore, ActFork, ActDelete:
			return refusal(CodeForbidden, keptOnlyPersonWords(s.Name, string(act)))
		}
	}
	switch act {
	case ActSee, ActTake:
		return nil
	case ActFork:
		if access == accessRunsOn {
			// The box a thread runs on is forked by the person only.
			return refusal(CodeForbidden, onlyPersonForksExecutionWords(b.Name))
		}
		return nil
	case ActPicture:
		if s != nil && s.Kept() {
			// A kept snapshot is the person's: the agent sees it while its
			// box lives, without its picture.
			return SnapshotNotFound(s.ID)
		}
		return nil
	case ActRestore:
		return nil // the restore's own rules (execution machines, the guard) follow
	case ActDelete:
		if s == nil {
			return nil
		}
		if s.Kept() || s.OwnerKind == "person" {
			return refusal(CodeForbidden, keptOnlyPersonWords(s.Name, "delete"))
		}
		if s.ByKind != "agent" || s.ByThreadID == nil || *s.ByThreadID != c.Thread {
			return refusal(CodeForbidden, notThisThreadsWords(s.Name))
		}
		return nil
	case ActKeep, ActUnkeep:
		return refusal(CodeForbidden, onlyPersonKeepsWords)
	case ActRename, ActNote:
		return refusal(CodeForbidden, onlyPersonRenamesWords)
	case ActRelease:
		return MayBox(c, BoxRelease, b)
	}
	return refusal(CodeForbidden, NotAllowedWords)
}

// agentSees is what an agent may see: on its own box, the agent sees its
// thread's snapshots, and kept ones while the box lives; on a box it runs on,
// only what it took there. No thread sees another thread's.
func agentSees(thread string, access boxAccess, s *Snapshot) bool {
	tookIt := s.ByKind == "agent" && s.ByThreadID != nil && *s.ByThreadID == thread
	switch access {
	case accessOwnBox:
		if tookIt {
			return true
		}
		if s.ByKind == "agent" && s.ByThreadID != nil && *s.ByThreadID != thread {
			return false // another thread's agent took it
		}
		return s.OwnerThreadID != nil && *s.OwnerThreadID == thread || s.Kept()
	case accessRunsOn:
		return tookIt
	}
	return false
}
