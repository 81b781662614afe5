// Package toolparams holds the agent tools' parameter types: what each
// tool of app/api's table takes, as a JSON tool call's body and as MCP's
// arguments, whose input schema is made from these structs' fields and
// their JSON names. They are plain data: app/api decodes a call into them
// (app/api/jsonin) and checks them before anything is asked of the core.
//
// It must never import a package of boxsnap.
package toolparams
