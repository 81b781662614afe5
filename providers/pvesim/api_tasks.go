package pvesim

import (
	"strings"
)

// defaultTaskLimit is the page size of GET /nodes/{node}/tasks (PM
// API2/Tasks.pm node_tasks: limit default 50).
const defaultTaskLimit = 50

// getTasks is GET /nodes/{node}/tasks (PM API2/Tasks.pm node_tasks):
// newest first; source=archive (the default) lists finished tasks only,
// active the running ones, all both; filters vmid, typefilter, userfilter,
// statusfilter, errors, since, until; pages with start and limit; the
// envelope carries total. Without Sys.Audit on /nodes/{node} a caller
// sees only its own tasks (a token only the token's).
func getTasks(c *call) (any, error) {
	s := c.s
	n := s.nodes[c.vars["node"]]
	source := c.str("source")
	if source == "" {
		source = "archive"
	}
	if source != "archive" && source != "active" && source != "all" {
		return nil, paramErr(map[string]string{"source": "value '" + source + "' does not have a value in the enumeration 'archive, active, all'"})
	}
	auditor := s.has(c.who, "/nodes/"+n.name, "Sys.Audit")
	vmid := c.str("vmid")
	typefilter := c.str("typefilter")
	userfilter := c.str("userfilter")
	since, until := c.num("since", 0), c.num("until", 0)
	// Running tasks come first (the active list), then finished ones, each
	// newest first, as node_tasks reads the active file and then the index
	// backwards.
	var ordered []*task
	for _, pass := range []bool{false, true} {
		for _, t := range sortedTasks(n.tasks) {
			if t.done == pass {
				ordered = append(ordered, t)
			}
		}
	}
	var matched []map[string]any
	for _, t := range ordered {
		switch {
		case source == "archive" && !t.done, source == "active" && t.done:
			continue
		case userfilter != "" && !strings.Contains(strings.ToLower(t.user), strings.ToLower(userfilter)):
			continue
		case !auditor && !taskVisibleTo(t, c.who.id):
			continue
		case vmid != "" && t.id != vmid:
			continue
		case typefilter != "" && t.typ != typefilter:
			continue
		case c.isSet("since") && t.start.Unix() < int64(since):
			continue
		case c.isSet("until") && t.start.Unix() > int64(until):
			continue
		}
		if !statusAllowed(c, t) {
			continue
		}
		matched = append(matched, t.listJSON())
	}
	start := max(c.num("start", 0), 0)
	limit := c.num("limit", defaultTaskLimit)
	c.extra["total"] = len(matched)
	if start >= len(matched) {
		return []map[string]any{}, nil
	}
	end := len(matched)
	if limit > 0 && start+limit < end {
		end = start + limit
	}
	return matched[start:end], nil
}

// statusAllowed applies statusfilter and errors (PM API2/Tasks.pm: the
// status's type is CO Tools.pm upid_normalize_status_type: ok, warning,
// error, or unknown for a running task; errors=1 drops only ok).
func statusAllowed(c *call, t *task) bool {
	kind := "error"
	switch {
	case !t.done:
		kind = "unknown"
	case t.status == "OK":
		kind = "ok"
	case strings.HasPrefix(t.status, "WARNINGS: "):
		kind = "warning"
	}
	if c.flag("errors") {
		return kind != "ok"
	}
	filter := c.str("statusfilter")
	if filter == "" {
		return true
	}
	for _, f := range strings.FieldsFunc(filter, func(r rune) bool { return r == ',' || r == ';' || r == ' ' }) {
		if strings.ToLower(f) == kind {
			return true
		}
	}
	return false
}

// taskVisibleTo is PM API2/Tasks.pm check_task_user: a token sees only its
// own tasks, a user its own and its tokens'.
func taskVisibleTo(t *task, caller string) bool {
	return caller == t.owner() || caller == t.user
}

// taskFor finds the path's task and checks who may read it (PM
// API2/Tasks.pm: another's task needs Sys.Audit on /nodes/{node}). An
// unknown UPID is 400 with errors.upid "no such task".
func taskFor(c *call) (*task, error) {
	upid := c.vars["upid"]
	node, ok := parseUPID(upid)
	if !ok {
		return nil, paramErr(map[string]string{"upid": "unable to parse worker upid '" + upid + "'"})
	}
	t := c.s.findTask(upid)
	if t == nil || node != c.vars["node"] {
		return nil, paramErr(map[string]string{"upid": "no such task"})
	}
	if !taskVisibleTo(t, c.who.id) {
		if err := c.s.check(c.who, "/nodes/"+c.vars["node"], "Sys.Audit"); err != nil {
			return nil, err
		}
	}
	return t, nil
}

// getTaskIndex is GET /nodes/{node}/tasks/{upid} (its subdirectories).
func getTaskIndex(c *call) (any, error) {
	if _, err := taskFor(c); err != nil {
		return nil, err
	}
	return []map[string]any{{"name": "log"}, {"name": "status"}}, nil
}

// getTaskStatus is GET /nodes/{node}/tasks/{upid}/status (PM
// API2/Tasks.pm read_task_status).
func getTaskStatus(c *call) (any, error) {
	t, err := taskFor(c)
	if err != nil {
		return nil, err
	}
	return t.statusJSON(), nil
}

// getTaskLog is GET /nodes/{node}/tasks/{upid}/log (PM API2/Tasks.pm
// read_task_log): [{n, t}], n from 1, paged by start and limit (default
// 50); total in the envelope.
func getTaskLog(c *call) (any, error) {
	t, err := taskFor(c)
	if err != nil {
		return nil, err
	}
	lines := append([]string{"pvesim simulator: task " + t.typ + " for " + t.id}, t.log...)
	start := max(c.num("start", 0), 0)
	limit := c.num("limit", defaultTaskLimit)
	out := []map[string]any{}
	for i := start; i < len(lines) && (limit <= 0 || i < start+limit); i++ {
		out = append(out, map[string]any{"n": i + 1, "t": lines[i]})
	}
	c.extra["total"] = len(lines)
	return out, nil
}
