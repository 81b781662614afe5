package snapshots

// EvStarted is the box log's event for a box the person started.
const EvStarted = "started"
