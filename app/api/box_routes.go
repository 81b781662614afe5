package api

// boxRoutes are the handlers of the boxes and the trash: a box listed,
// made, read, released, reset and undone, its history, presence, log and
// lineage, and the boxes in the trash restored or emptied. They hold the
// server, in a type of their own so the server's type does not grow.
type boxRoutes struct{ *server }
