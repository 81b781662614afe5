package pvesim

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

const (
	apiPrefix     = "/api2/json"
	controlPrefix = "/pvesim/control/"
	// maxBody is the largest request body read (HS AnyEvent.pm limits
	// POST data to 64 KiB for the API).
	maxBody = 64 << 10
	// statusUnreachable is the status pveproxy answers when the node a
	// request is proxied to cannot be reached (HS AnyEvent.pm
	// proxy_request's error path; unverified against a live cluster).
	statusUnreachable = 595
	// descriptionMax is the most a description may hold (QS/PC schema:
	// maxLength 8 KiB).
	descriptionMax = 8 * 1024
)

// die is a plain die in a handler: 500 with the message (HS AnyEvent.pm).
func die(format string, args ...any) error {
	return &apiError{status: http.StatusInternalServerError, message: fmt.Sprintf(format, args...)}
}

// paramErr is CO JSONSchema.pm's raise_param_exc: 400 "Parameter
// verification failed." with the parameter's own message.
func paramErr(errs map[string]string) error {
	return &apiError{status: http.StatusBadRequest, message: "Parameter verification failed.", errors: errs}
}

// ptype is a parameter's schema type.
type ptype int

const (
	pString ptype = iota
	pBool
	pInt
	pConfigID // CO JSONSchema.pm format pve-configid, maxLength 40
)

type handlerFunc func(c *call) (any, error)

// route is one line of the route table: method, pattern, the parameters
// the Proxmox schema allows (anything else is refused, as Proxmox's
// additionalProperties => 0 does), and the handler.
type route struct {
	method   string
	pattern  string
	params   map[string]ptype
	required []string
	handle   handlerFunc
	noAuth   bool
	segs     []string
}

// call is one API request being answered, under cluster.mu.
type call struct {
	s      *Sim
	r      *http.Request
	who    *principal
	vars   map[string]string
	params map[string]string
	extra  map[string]any // added to the envelope beside "data" (e.g. total)
}

func (c *call) str(name string) string { return c.params[name] }

func (c *call) isSet(name string) bool { _, ok := c.params[name]; return ok }

func (c *call) flag(name string) bool { return c.params[name] == "1" }

func (c *call) num(name string, def int) int {
	v, ok := c.params[name]
	if !ok {
		return def
	}
	n, err := strconv.Atoi(v)
	if err != nil {
		return def
	}
	return n
}

func (s *Sim) serveAPI(w http.ResponseWriter, r *http.Request, routes []route) {
	path := strings.Trim(strings.TrimPrefix(r.URL.Path, apiPrefix), "/")
	segs := strings.Split(path, "/")
	var rt *route
	var vars map[string]string
	methodSeen := false
	for i := range routes {
		v, ok := matchRoute(routes[i].segs, segs)
		if !ok {
			continue
		}
		methodSeen = true
		if routes[i].method == r.Method {
			rt, vars = &routes[i], v
			break
		}
	}
	body, err := readParams(r)
	if err != nil {
		writeError(w, asAPIError(err))
		return
	}

	s.mu.Lock()
	if rt == nil {
		s.calls[r.Method+" ?"]++
		s.mu.Unlock()
		// HS AnyEvent.pm: an unknown path or method is 501.
		_ = methodSeen
		writeError(w, &apiError{status: http.StatusNotImplemented, message: "Method '" + r.Method + " /" + path + "' not implemented"})
		return
	}
	s.calls[rt.method+" /"+rt.pattern]++
	s.advanceLocked()
	data, extra, who, err := s.dispatch(r, rt, vars, body)
	s.mu.Unlock()

	caller := ""
	if who != nil {
		caller = who.id
	}
	if _, drop := err.(errDropped); drop {
		s.log.Info("pvesim simulator request dropped (node unreachable)", "method", r.Method, "path", r.URL.Path)
		dropConnection(w)
		return
	}
	if err != nil {
		ae := asAPIError(err)
		s.log.Info("pvesim simulator request", "method", r.Method, "path", r.URL.Path, "status", ae.status, "caller", caller, "error", ae.message)
		if ae.status == http.StatusUnauthorized && s.cfg.AuthFailDelay > 0 {
			select {
			case <-time.After(s.cfg.AuthFailDelay):
			case <-r.Context().Done():
				return
			}
		}
		writeError(w, ae)
		return
	}
	s.log.Debug("pvesim simulator request", "method", r.Method, "path", r.URL.Path, "status", http.StatusOK, "caller", caller)
	env := map[string]any{"data": data}
	for k, v := range extra {
		// HS Formatter/Standard.pm prepare_response_data adds total only
		// when it is not zero.
		if n, isInt := v.(int); k == "total" && isInt && n == 0 {
			continue
		}
		env[k] = v
	}
	writeJSON(w, http.StatusOK, env)
}

// dispatch runs under cluster.mu: node reachability, authentication, the
// parameter schema, then the handler.
func (s *Sim) dispatch(r *http.Request, rt *route, vars, params map[string]string) (any, map[string]any, *principal, error) {
	c := &call{s: s, r: r, vars: vars, params: params, extra: map[string]any{}}
	if n, ok := vars["node"]; ok {
		nd := s.nodes[n]
		if nd == nil {
			// PM/HS: the API node cannot resolve a node it does not know.
			return nil, nil, nil, die("hostname lookup '%s' failed - failed to get address info for: %s: Name or service not known", n, n)
		}
		if nd.dropped {
			return nil, nil, nil, errDropped{}
		}
		if nd.cut {
			return nil, nil, nil, &apiError{status: statusUnreachable, message: "No route to host"}
		}
	}
	if !rt.noAuth {
		who, err := s.authenticate(r)
		if err != nil {
			return nil, nil, nil, err
		}
		c.who = who
	}
	if err := validateParams(rt, vars, params); err != nil {
		return nil, nil, c.who, err
	}
	data, err := rt.handle(c)
	return data, c.extra, c.who, err
}

func matchRoute(pattern, segs []string) (map[string]string, bool) {
	if len(pattern) != len(segs) {
		return nil, false
	}
	vars := map[string]string{}
	for i, p := range pattern {
		if strings.HasPrefix(p, "{") {
			name := strings.Trim(p, "{}")
			if name == "type" && segs[i] != string(LXC) && segs[i] != string(QEMU) {
				return nil, false
			}
			if name == "action" && !isPowerAction(segs[i]) {
				return nil, false
			}
			v, err := url.PathUnescape(segs[i])
			if err != nil || v == "" {
				return nil, false
			}
			vars[name] = v
			continue
		}
		if p != segs[i] {
			return nil, false
		}
	}
	return vars, true
}

// readParams merges the query and the body (form-urlencoded or JSON), as
// HS AnyEvent.pm does for every method. JSON booleans become 1/0.
func readParams(r *http.Request) (map[string]string, error) {
	out := map[string]string{}
	for k, v := range r.URL.Query() {
		if len(v) > 0 {
			out[k] = v[0]
		}
	}
	if r.Body == nil {
		return out, nil
	}
	raw, err := io.ReadAll(io.LimitReader(r.Body, maxBody+1))
	if err != nil {
		return nil, &apiError{status: http.StatusBadRequest, message: "unable to read request body"}
	}
	if len(raw) > maxBody {
		return nil, &apiError{status: http.StatusRequestEntityTooLarge, message: "request too large"}
	}
	if len(bytes.TrimSpace(raw)) == 0 {
		return out, nil
	}
	ct, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if ct == "application/json" {
		var m map[string]any
		if err := json.Unmarshal(raw, &m); err != nil {
			return nil, &apiError{status: http.StatusBadRequest, message: "malformed JSON string"}
		}
		for k, v := range m {
			switch x := v.(type) {
			case nil:
			case bool:
				out[k] = map[bool]string{true: "1", false: "0"}[x]
			case float64:
				out[k] = strconv.FormatFloat(x, 'f', -1, 64)
			case string:
				out[k] = x
			default:
				b, _ := json.Marshal(x)
				out[k] = string(b)
			}
		}
		return out, nil
	}
	form, err := url.ParseQuery(string(raw))
	if err != nil {
		return nil, &apiError{status: http.StatusBadRequest, message: "unable to parse request body"}
	}
	for k, v := range form {
		if len(v) > 0 {
			out[k] = v[0]
		}
	}
	return out, nil
}

// isInteger is CO JSONSchema.pm's integer check: ^-?\d+$.
func isInteger(v string) bool {
	v = strings.TrimPrefix(v, "-")
	if v == "" {
		return false
	}
	for _, r := range v {
		if r < '0' || r > '9' {
			return false
		}
	}
	return true
}

// isConfigID is CO JSONSchema.pm pve_verify_configid: ^[a-z][a-z0-9_-]+$,
// case-insensitive.
func isConfigID(v string) bool {
	if len(v) < 2 {
		return false
	}
	for i, r := range strings.ToLower(v) {
		letter := r >= 'a' && r <= 'z'
		if i == 0 && !letter {
			return false
		}
		if !letter && !(r >= '0' && r <= '9') && r != '_' && r != '-' {
			return false
		}
	}
	return true
}

// validateParams applies the route's schema (CO JSONSchema.pm
// validate/check_type): unknown parameters, type checks, formats, and
// missing required ones, all reported together.
func validateParams(rt *route, vars, params map[string]string) error {
	errs := map[string]string{}
	for k, v := range params {
		if _, isVar := vars[k]; isVar {
			continue
		}
		t, ok := rt.params[k]
		if !ok {
			errs[k] = "property is not defined in schema and the schema does not allow additional properties"
			continue
		}
		if msg := checkType(t, v); msg != "" {
			errs[k] = msg
		}
	}
	for k, v := range vars {
		switch k {
		case "vmid":
			if msg := checkType(pInt, v); msg != "" {
				errs[k] = msg
			}
		case "snapname":
			if msg := checkType(pConfigID, v); msg != "" {
				errs[k] = msg
			}
		}
	}
	for _, k := range rt.required {
		if _, ok := params[k]; !ok {
			errs[k] = "property is missing and it is not optional"
		}
	}
	if len(errs) > 0 {
		return paramErr(errs)
	}
	return nil
}

func checkType(t ptype, v string) string {
	switch t {
	case pBool:
		if v != "0" && v != "1" {
			return "type check ('boolean') failed - got '" + v + "'"
		}
	case pInt:
		if !isInteger(v) {
			return "type check ('integer') failed - got '" + v + "'"
		}
	case pConfigID:
		if len(v) > 40 {
			return "value may only be 40 characters long"
		}
		if !isConfigID(v) {
			return "invalid format - invalid configuration ID '" + v + "'"
		}
	}
	return ""
}

// errDropped marks a request to a dropped node: no answer at all.
type errDropped struct{}

func (errDropped) Error() string { return "dropped" }

// dropConnection closes the client's connection without an answer, as a
// node that went away mid-connection does.
func dropConnection(w http.ResponseWriter) {
	if hj, ok := w.(http.Hijacker); ok {
		if conn, _, err := hj.Hijack(); err == nil {
			_ = conn.Close()
			return
		}
	}
	panic(http.ErrAbortHandler)
}

func asAPIError(err error) *apiError {
	if ae, ok := err.(*apiError); ok {
		return ae
	}
	return &apiError{status: http.StatusInternalServerError, message: err.Error()}
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		writeError(w, &apiError{status: http.StatusInternalServerError, message: "pvesim: encode: " + err.Error()})
		return
	}
	w.Header().Set("Content-Type", "application/json;charset=UTF-8")
	w.Header().Set("Cache-Control", "max-age=0")
	w.Header().Set("Content-Length", strconv.Itoa(len(b)))
	w.WriteHeader(status)
	_, _ = w.Write(b)
}

// writeError answers an error as pveproxy does: the reason phrase is the
// message's first line (HS AnyEvent.pm response; clients such as Telmate's
// read only that), the body {"data":null,"message":"...\n"} with "errors"
// for a 400, and an empty body for a 401 and for a 595 (AnyEvent::HTTP's
// own status for a connection that failed, passed on by proxy_request). Go's server cannot set a reason phrase, so the
// answer is written on the hijacked connection, which is then closed.
func writeError(w http.ResponseWriter, e *apiError) {
	msg := strings.TrimRight(e.message, "\n")
	reason, _, _ := strings.Cut(msg, "\n")
	reason = strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f {
			return ' '
		}
		return r
	}, reason)
	var body []byte
	if e.status != http.StatusUnauthorized && e.status != statusUnreachable {
		env := map[string]any{"data": nil, "message": msg + "\n"}
		if len(e.errors) > 0 {
			errs := map[string]string{}
			for k, v := range e.errors {
				errs[k] = strings.TrimRight(v, "\n") + "\n"
			}
			env["errors"] = errs
		}
		body, _ = json.Marshal(env)
	}
	hj, ok := w.(http.Hijacker)
	if !ok {
		w.Header().Set("Content-Type", "application/json;charset=UTF-8")
		w.WriteHeader(e.status)
		_, _ = w.Write(body)
		return
	}
	conn, rw, err := hj.Hijack()
	if err != nil {
		w.WriteHeader(e.status)
		_, _ = w.Write(body)
		return
	}
	defer conn.Close()
	writeRawResponse(rw.Writer, e.status, reason, body)
	_ = rw.Flush()
}

func writeRawResponse(bw *bufio.Writer, status int, reason string, body []byte) {
	fmt.Fprintf(bw, "HTTP/1.1 %d %s\r\n", status, reason)
	fmt.Fprintf(bw, "Server: %s\r\n", serverHeader)
	fmt.Fprintf(bw, "Date: %s\r\n", time.Now().UTC().Format(http.TimeFormat))
	fmt.Fprintf(bw, "Cache-Control: max-age=0\r\nPragma: no-cache\r\nConnection: close\r\n")
	fmt.Fprintf(bw, "Content-Type: application/json;charset=UTF-8\r\n")
	fmt.Fprintf(bw, "Content-Length: %d\r\n\r\n", len(body))
	_, _ = bw.Write(body)
}

// powerActions are the status/{action} endpoints (QS API2/Qemu.pm and PC
// API2/LXC/Status.pm: vm_start, vm_stop, vm_shutdown, vm_suspend,
// vm_resume).
func isPowerAction(a string) bool {
	switch a {
	case "start", "stop", "shutdown", "suspend", "resume":
		return true
	}
	return false
}
