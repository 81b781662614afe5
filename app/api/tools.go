package api

import (
	"net/http"
	"strings"

	"github.com/boxsnap/boxsnap/app/api/toolparams"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// toolDef is one agent tool: served as JSON at
// /api/v1/tools/<name> and over MCP at /mcp from this one table, so a tool
// added here is in both. Its description is its summary in openapi.json,
// the one home of the words an agent reads about it.
type toolDef struct {
	Name string
	// Params is the tool's parameters, a struct value: MCP's input schema
	// is made from it. A tool that changes something takes a request, the
	// retry key that makes a repeat answer the first call (retry.go).
	Params any
	// Required are the parameters a call must send.
	Required []string
	// Hints say what the tool does to the boxes, as MCP's annotations.
	Hints  toolHints
	handle func(*server, http.ResponseWriter, *http.Request)
}

// toolHints are what a tool does, told to an MCP client so it can tell a
// read from a destructive call. No tool reaches beyond boxsnap's own boxes,
// so none is open-world.
type toolHints struct {
	// ReadOnly: the tool changes nothing.
	ReadOnly bool
	// Destructive: the tool deletes or overwrites something (a snapshot,
	// a box's disk); the undo it takes first does not make it less so.
	Destructive bool
	// Idempotent: calling it again with the same arguments changes
	// nothing more, request or no request.
	Idempotent bool
}

var (
	reads       = toolHints{ReadOnly: true, Idempotent: true}
	adds        = toolHints{}
	overwrites  = toolHints{Destructive: true}
	sets        = toolHints{Idempotent: true}
	deletesOnce = toolHints{Destructive: true, Idempotent: true}
)

// tools is the table of agent tools.
var tools = []toolDef{
	{Name: "box_snapshot", Params: toolparams.SnapshotParams{}, Required: []string{"box"}, Hints: adds, handle: tool(agentTools.toolSnapshot)},
	{Name: "box_snapshots", Params: toolparams.SnapshotsParams{}, Hints: reads, handle: tool(agentTools.toolSnapshots)},
	{Name: "box_restore", Params: toolparams.RestoreParams{}, Required: []string{"box", "snapshot"}, Hints: overwrites, handle: tool(agentTools.toolRestore)},
	{Name: "box_fork", Params: toolparams.ForkToolParams{}, Hints: adds, handle: tool(agentTools.toolFork)},
	{Name: "box_snapshot_delete", Params: toolparams.DeleteParams{}, Required: []string{"box", "snapshot"}, Hints: deletesOnce, handle: tool(agentTools.toolSnapshotDelete)},
	{Name: "box_snapshot_diff", Params: toolparams.SnapshotDiffParams{}, Required: []string{"box", "snapshot"}, Hints: reads, handle: tool(agentTools.toolSnapshotDiff)},
	{Name: "box_snapshot_save", Params: toolparams.SaveParams{}, Required: []string{"box", "snapshot"}, Hints: sets, handle: tool(agentTools.toolSnapshotSave)},
	{Name: "box_snapshot_unsave", Params: toolparams.UnsaveParams{}, Required: []string{"box", "snapshot"}, Hints: sets, handle: tool(agentTools.toolSnapshotUnsave)},
	{Name: "box_reset", Params: toolparams.ResetToolParams{}, Required: []string{"box"}, Hints: overwrites, handle: tool(agentTools.toolReset)},
	{Name: "box_undo", Params: toolparams.UndoParams{}, Required: []string{"box"}, Hints: overwrites, handle: tool(agentTools.toolUndo)},
	{Name: "box_trash", Params: toolparams.TrashToolParams{}, Hints: reads, handle: tool(agentTools.toolTrash)},
	{Name: "box_trash_restore", Params: toolparams.BoxToolParams{}, Required: []string{"box"}, Hints: sets, handle: tool(agentTools.toolTrashRestore)},
	{Name: "box_release", Params: toolparams.ReleaseParams{}, Required: []string{"box"}, Hints: deletesOnce, handle: tool(agentTools.toolRelease)},
	{Name: "box_snapshot_files", Params: toolparams.LookParams{}, Required: []string{"box", "snapshot"}, Hints: reads, handle: tool(agentTools.toolSnapshotFiles)},
	{Name: "box_snapshot_file", Params: toolparams.LookParams{}, Required: []string{"box", "snapshot", "path"}, Hints: reads, handle: tool(agentTools.toolSnapshotFile)},
	{Name: "box_lineage", Params: toolparams.LineageParams{}, Required: []string{"box"}, Hints: reads, handle: tool(agentTools.toolLineage)},
	{Name: "box_head", Params: toolparams.HeadParams{}, Required: []string{"box", "snapshot"}, Hints: sets, handle: headTool},
	{Name: "box_list", Params: toolparams.BoxListParams{}, Hints: reads, handle: tool(agentTools.toolBoxList)},
	{Name: "box_make", Params: toolparams.BoxMakeParams{}, Required: []string{"template"}, Hints: adds, handle: tool(agentTools.toolBoxMake)},
	{Name: "box_operation", Params: toolparams.OperationParams{}, Required: []string{"operation"}, Hints: reads, handle: (*server).getOperation},
}

// Annotations are a tool's hints as MCP says them.
func (t toolDef) Annotations() *mcp.ToolAnnotations {
	destructive, openWorld := t.Hints.Destructive, false
	return &mcp.ToolAnnotations{ReadOnlyHint: t.Hints.ReadOnly, DestructiveHint: &destructive,
		IdempotentHint: t.Hints.Idempotent, OpenWorldHint: &openWorld}
}

// toolNames lists the tools in words: "box_snapshot, … and box_fork".
func toolNames() string {
	names := make([]string, len(tools))
	for i, t := range tools {
		names[i] = t.Name
	}
	if len(names) < 2 {
		return strings.Join(names, "")
	}
	return strings.Join(names[:len(names)-1], ", ") + " and " + names[len(names)-1]
}

// ToolNames are the agent tools' names, in the table's order.
func ToolNames() []string {
	names := make([]string, len(tools))
	for i, t := range tools {
		names[i] = t.Name
	}
	return names
}
