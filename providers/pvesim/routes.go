package pvesim

// routes is the simulator's whole API surface, one line per endpoint, each
// with the parameters Proxmox's schema allows (path variables are always
// allowed).
func (s *Sim) routes() []route {
	none := map[string]ptype{}
	return []route{
		{method: "GET", pattern: "version", params: none, handle: getVersion},
		{method: "POST", pattern: "access/ticket", noAuth: true, handle: postTicket,
			params:   map[string]ptype{"username": pString, "password": pString, "realm": pString, "otp": pString, "path": pString, "privs": pString, "new-format": pBool, "tfa-challenge": pString},
			required: []string{"username", "password"}},
		{method: "GET", pattern: "access/permissions", params: map[string]ptype{"userid": pString, "path": pString}, handle: getPermissions},
		{method: "GET", pattern: "nodes", params: none, handle: getNodes},
		{method: "GET", pattern: "nodes/{node}/status", params: none, handle: getNodeStatus},
		{method: "GET", pattern: "cluster/resources", params: map[string]ptype{"type": pString}, handle: getClusterResources},
		{method: "GET", pattern: "cluster/nextid", params: map[string]ptype{"vmid": pInt}, handle: getNextID},
		{method: "GET", pattern: "storage", params: map[string]ptype{"type": pString}, handle: getStorageList},
		{method: "GET", pattern: "nodes/{node}/storage", params: map[string]ptype{"content": pString, "enabled": pBool, "format": pBool, "storage": pString, "target": pString}, handle: getNodeStorages},
		{method: "GET", pattern: "nodes/{node}/storage/{storage}/status", params: none, handle: getStorageStatus},
		{method: "GET", pattern: "nodes/{node}/disks/lvmthin", params: none, handle: getLVMThin},

		{method: "GET", pattern: "nodes/{node}/{type}", params: map[string]ptype{"full": pBool}, handle: getGuests},
		{method: "DELETE", pattern: "nodes/{node}/{type}/{vmid}", handle: deleteGuest,
			params: map[string]ptype{"purge": pBool, "destroy-unreferenced-disks": pBool, "skiplock": pBool, "force": pBool}},
		{method: "GET", pattern: "nodes/{node}/{type}/{vmid}/status/current", params: none, handle: getGuestStatus},
		{method: "POST", pattern: "nodes/{node}/{type}/{vmid}/status/{action}", handle: postPower,
			params: map[string]ptype{"skiplock": pBool, "timeout": pInt, "forceStop": pBool, "keepActive": pBool, "overrule-shutdown": pBool, "todisk": pBool, "statestorage": pString, "nocheck": pBool, "migratedfrom": pString}},
		{method: "GET", pattern: "nodes/{node}/{type}/{vmid}/config", params: map[string]ptype{"current": pBool, "snapshot": pConfigID}, handle: getConfig},
		{method: "PUT", pattern: "nodes/{node}/{type}/{vmid}/config", params: configParams(), handle: putConfig},

		{method: "GET", pattern: "nodes/{node}/{type}/{vmid}/snapshot", params: none, handle: getSnapshots},
		{method: "POST", pattern: "nodes/{node}/{type}/{vmid}/snapshot", handle: postSnapshot,
			params: map[string]ptype{"snapname": pConfigID, "description": pString, "vmstate": pBool}, required: []string{"snapname"}},
		{method: "GET", pattern: "nodes/{node}/{type}/{vmid}/snapshot/{snapname}", params: none, handle: getSnapshotIndex},
		{method: "DELETE", pattern: "nodes/{node}/{type}/{vmid}/snapshot/{snapname}", params: map[string]ptype{"force": pBool}, handle: deleteSnapshot},
		{method: "GET", pattern: "nodes/{node}/{type}/{vmid}/snapshot/{snapname}/config", params: none, handle: getSnapshotConfig},
		{method: "PUT", pattern: "nodes/{node}/{type}/{vmid}/snapshot/{snapname}/config", params: map[string]ptype{"description": pString}, handle: putSnapshotConfig},
		{method: "POST", pattern: "nodes/{node}/{type}/{vmid}/snapshot/{snapname}/rollback", params: map[string]ptype{"start": pBool}, handle: postRollback},

		{method: "POST", pattern: "nodes/{node}/{type}/{vmid}/clone", handle: postClone,
			params:   map[string]ptype{"newid": pInt, "hostname": pString, "name": pString, "description": pString, "pool": pString, "snapname": pConfigID, "storage": pString, "format": pString, "full": pBool, "target": pString, "bwlimit": pInt},
			required: []string{"newid"}},
		{method: "POST", pattern: "nodes/{node}/{type}/{vmid}/template", params: map[string]ptype{"disk": pString}, handle: postTemplate},

		{method: "GET", pattern: "nodes/{node}/tasks", handle: getTasks,
			params: map[string]ptype{"start": pInt, "limit": pInt, "userfilter": pString, "typefilter": pString, "vmid": pInt, "errors": pBool, "statusfilter": pString, "since": pInt, "until": pInt, "source": pString}},
		{method: "GET", pattern: "nodes/{node}/tasks/{upid}", params: none, handle: getTaskIndex},
		{method: "GET", pattern: "nodes/{node}/tasks/{upid}/status", params: none, handle: getTaskStatus},
		{method: "GET", pattern: "nodes/{node}/tasks/{upid}/log", params: map[string]ptype{"start": pInt, "limit": pInt, "download": pBool}, handle: getTaskLog},
	}
}
