// Package pagemodel builds what the web's pages draw from a reading of the
// core: each snapshot's row (its badges, its one line, each action with its
// URL and why it is refused, its menu), a box's card, head, facts, notices,
// Now row, history and timeline, the Snapshots tab's query, filters and line,
// the Settings rows, and every dialog's model (take, restore, fork, keep,
// delete, rename, note, save, unsave, export, share, bulk, delete history,
// forget a backend), each dialog's builder in a file named for it
// (restore_dialog.go). words.go holds the words only the pages say (the
// Now row's, the timeline's, a row's price and size, a step's, the box
// log's kinds of event and an event's line); words the
// core or another surface says too stay in app/snapshots' words.go.
//
// RowBuilder and DialogBuilder hold only the core's parts they read
// (NewBuilders); a builder reads the request through Request (its context,
// its values and where its dialog returns), so the package never imports
// net/http, and app/web's handlers, one a file, call it. It must never
// import net/http, app/web, app/api, app/cli, jobs or a provider's
// implementation.
package pagemodel
