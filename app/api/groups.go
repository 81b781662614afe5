package api

// Each group of handlers is built here, from the server, with what its
// handlers use and nothing more.

func newSettingsRoutes(s *server) settingsRoutes {
	return settingsRoutes{failer: s.failer, core: s.core, boxes: s.boxes}
}

func newApprovalRequests(s *server) approvalRequests {
	return approvalRequests{failer: s.failer, approvalOperations: s.operations, core: s.core, approvals: s.approvals}
}

func newSnapshotMoves(s *server) snapshotMoves {
	return snapshotMoves{failer: s.failer, moveOperations: s.operations, contents: s.contents}
}

func newBoxRoutes(s *server) boxRoutes {
	return boxRoutes{failer: s.failer, boxOperations: s.operations, core: s.core, boxes: s.boxes,
		keeps: s.keeps, restores: s.restores, plans: s.plans}
}

func newSnapshotReads(s *server) snapshotReads {
	return snapshotReads{failer: s.failer, readLookups: s.lookups, core: s.core, contents: s.contents,
		pictures: s.pictures, tab: s.tab}
}

func newForkMany(s *server) forkMany {
	return forkMany{failer: s.failer, forkOperations: s.operations, core: s.core, forks: s.forks}
}

func newSnapshotChanges(s *server) snapshotChanges {
	return snapshotChanges{failer: s.failer, changeOperations: s.operations, core: s.core, take: s.take,
		keeps: s.keeps, restores: s.restores, forks: s.forks, plans: s.plans, many: newForkMany(s)}
}

func newAgentTools(s *server) agentTools {
	return agentTools{failer: s.failer, toolOperations: s.operations, toolLookups: s.lookups, core: s.core,
		boxes: s.boxes, take: s.take, keeps: s.keeps, restores: s.restores, forks: s.forks, plans: s.plans,
		pictures: s.pictures, many: newForkMany(s), trash: newBoxRoutes(s)}
}

func newHostRoutes(s *server) hostRoutes {
	return hostRoutes{failer: s.failer, hostOperations: s.operations, hosts: s.hosts}
}

func newHeadRoutes(s *server) headRoutes { return headRoutes{failer: s.failer, heads: s.heads} }
