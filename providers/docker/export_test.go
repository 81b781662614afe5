package docker

// TakeVolumeCopies makes the backend's takes copy the box's volume into a
// volume of the snapshot's own (boxsnap-<ID>), as they do on an engine that
// cannot load an image on its layers and as every take did before a
// snapshot's volume went into its image; off, the backend asks the engine
// again at its next take.
func (b *Backend) TakeVolumeCopies(on bool) {
	b.records.mu.Lock()
	defer b.records.mu.Unlock()
	b.records.graph = ""
	if on {
		b.records.graph = "no"
	}
}
