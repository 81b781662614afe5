package qemu

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"encoding/xml"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/boxsnap/boxsnap/providers"
)

// metaNS is the namespace of boxsnap's element in a domain's metadata.
const metaNS = "https://boxsnap.dev/libvirt/qemu/1"

// labelPrefix starts a snapshot's description, before its label in JSON.
const labelPrefix = "boxsnap "

// boxMeta is what a domain's metadata holds of boxsnap's: IDs only.
type boxMeta struct {
	XMLName  xml.Name `xml:"https://boxsnap.dev/libvirt/qemu/1 box"`
	Install  string   `xml:"install,attr"`
	Box      string   `xml:"box,attr"`
	Template string   `xml:"template,attr"`
	Reset    int      `xml:"reset,attr"`
}

// metaElement is boxMeta as libvirt answers the element alone: without
// its namespace.
type metaElement struct {
	XMLName  xml.Name `xml:"box"`
	Install  string   `xml:"install,attr"`
	Box      string   `xml:"box,attr"`
	Template string   `xml:"template,attr"`
	Reset    int      `xml:"reset,attr"`
}

// domainXML is the part of a domain's XML the backend reads.
type domainXML struct {
	Name   string `xml:"name"`
	Memory struct {
		Value int64  `xml:",chardata"`
		Unit  string `xml:"unit,attr"`
	} `xml:"memory"`
	VCPU     int `xml:"vcpu"`
	Metadata struct {
		Box *boxMeta `xml:"https://boxsnap.dev/libvirt/qemu/1 box"`
	} `xml:"metadata"`
	Devices struct {
		Disks []struct {
			Source struct {
				File string `xml:"file,attr"`
			} `xml:"source"`
		} `xml:"disk"`
		Interfaces []struct {
			MAC struct {
				Address string `xml:"address,attr"`
			} `xml:"mac"`
		} `xml:"interface"`
	} `xml:"devices"`
}

func parseDomain(s string) (domainXML, error) {
	var d domainXML
	if err := xml.Unmarshal([]byte(s), &d); err != nil {
		return d, fmt.Errorf("read domain XML: %w", err)
	}
	return d, nil
}

func (d domainXML) memoryBytes() int64 {
	switch strings.ToLower(d.Memory.Unit) {
	case "", "kib", "k":
		return d.Memory.Value << 10
	case "mib", "m":
		return d.Memory.Value << 20
	case "gib", "g":
		return d.Memory.Value << 30
	case "b", "bytes":
		return d.Memory.Value
	}
	return d.Memory.Value << 10
}

// domainName is a box's domain.
func domainName(box string) string { return "boxsnap-" + box }

func (b *Backend) diskPath(name string) string { return filepath.Join(b.cfg.Dir, name+".qcow2") }

// ConsoleLog is where a guest's first serial port (its console) is written.
func (b *Backend) ConsoleLog(g providers.Guest) string {
	return filepath.Join(b.cfg.Dir, g.Ref+".console")
}

// SerialSocket is the unix socket of a guest's second serial port.
func (b *Backend) SerialSocket(g providers.Guest) string {
	return filepath.Join(b.cfg.Dir, g.Ref+".serial")
}

// newMAC gives a random MAC address in QEMU's range, 52:54:00:xx:xx:xx.
func newMAC() string {
	var p [3]byte
	_, _ = rand.Read(p[:])
	return fmt.Sprintf("52:54:00:%02x:%02x:%02x", p[0], p[1], p[2])
}

func esc(s string) string {
	var sb strings.Builder
	_ = xml.EscapeText(&sb, []byte(s))
	return sb.String()
}

// domainDef is a box's domain: the template's kernel, initramfs and
// command line, the box's disk, its access disk (access.go), a user-mode network interface with the
// box's MAC address (no boot ROM: the kernel is given), the console to a
// log file and a second serial port on a unix socket.
func (b *Backend) domainDef(name, disk, mac string, tpl Template, meta boxMeta) string {
	typ := "qemu"
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if b.AccelChoice(ctx).Accel == AccelKVM {
		typ = "kvm"
	}
	mem, cpus := tpl.MemoryMiB, tpl.CPUs
	if mem <= 0 {
		mem = 256
	}
	if cpus <= 0 {
		cpus = 1
	}
	g := providers.Guest{Ref: name}
	return fmt.Sprintf(`<domain type='%s'>
  <name>%s</name>
  <metadata><boxsnap:box xmlns:boxsnap='%s' install='%s' box='%s' template='%s' reset='%d'/></metadata>
  <memory unit='MiB'>%d</memory>
  <vcpu>%d</vcpu>
  <os><type arch='x86_64' machine='pc'>hvm</type><kernel>%s</kernel><initrd>%s</initrd><cmdline>%s</cmdline></os>
  <features><acpi/></features>
  <on_poweroff>destroy</on_poweroff><on_reboot>restart</on_reboot><on_crash>destroy</on_crash>
  <devices>
    <disk type='file' device='disk'><driver name='qemu' type='qcow2'/><source file='%s'/><target dev='vda' bus='virtio'/></disk>
    <disk type='file' device='disk' snapshot='no'><driver name='qemu' type='raw'/><source file='%s'/><target dev='vdb' bus='virtio'/><readonly/></disk>
    <interface type='user'><mac address='%s'/><model type='virtio'/><rom enabled='no'/></interface>
    <serial type='file'><source path='%s' append='on'/><target port='0'/></serial>
    <serial type='unix'><source mode='bind' path='%s'/><target port='1'/></serial>
    <memballoon model='none'/>
  </devices>
</domain>`, typ, esc(name), metaNS, esc(meta.Install), esc(meta.Box), esc(meta.Template), meta.Reset, mem, cpus,
		esc(tpl.Kernel), esc(tpl.Initrd), esc(tpl.Cmdline), esc(disk), esc(b.accessPath(name)), esc(mac), esc(b.ConsoleLog(g)), esc(b.SerialSocket(g)))
}

// snapLabel is a snapshot's label as its description holds it.
type snapLabel struct {
	providers.Label
	// Memory is set when the take asked for memory; a checkpoint of a
	// running guest taken without it restores as a disk snapshot.
	Memory bool `json:"memory,omitempty"`
}

// snapshotXML is the part of a snapshot's XML the backend reads.
type snapshotXML struct {
	Name         string `xml:"name"`
	Description  string `xml:"description"`
	State        string `xml:"state"`
	CreationTime int64  `xml:"creationTime"`
	Parent       struct {
		Name string `xml:"name"`
	} `xml:"parent"`
}

func parseSnapshot(s string) (snapshotXML, error) {
	var x snapshotXML
	if err := xml.Unmarshal([]byte(s), &x); err != nil {
		return x, fmt.Errorf("read snapshot XML: %w", err)
	}
	return x, nil
}

// label reads the snapshot's label; ok is false for a snapshot boxsnap did
// not take.
func (x snapshotXML) label() (snapLabel, bool) {
	var l snapLabel
	if !strings.HasPrefix(x.Description, labelPrefix) {
		return l, false
	}
	if err := json.Unmarshal([]byte(strings.TrimPrefix(x.Description, labelPrefix)), &l); err != nil {
		return l, false
	}
	return l, l.Snapshot != ""
}

// withMemory reports whether the snapshot holds the guest's memory: it was
// taken of a running guest.
func (x snapshotXML) withMemory() bool { return x.State == "running" || x.State == "paused" }

// holds is what a restore of the snapshot brings back.
func (x snapshotXML) holds() providers.Holds {
	if l, _ := x.label(); l.Memory && x.withMemory() {
		return providers.HoldsDiskAndMemory
	}
	return providers.HoldsDisk
}

func (x snapshotXML) takenAt() time.Time { return time.Unix(x.CreationTime, 0).UTC() }

func snapshotDef(l snapLabel) (string, error) {
	j, err := json.Marshal(l)
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("<domainsnapshot><name>%s</name><description>%s</description></domainsnapshot>", esc(l.Snapshot), esc(labelPrefix+string(j))), nil
}
