package snapshots
