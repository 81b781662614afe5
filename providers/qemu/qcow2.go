package qemu

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"

	"github.com/boxsnap/boxsnap/providers"
)

// baseName is the backing file an incremental export's qcow2 names: a word,
// never a path, which the import replaces with its own copy of the base.
const baseName = "boxsnap-base"

// maxVirtual bounds an imported disk's virtual size: a qcow2 header can
// claim any size, and a guest's disk grows into it.
const maxVirtual = 2 << 40

// The qcow2 header's fields and features an imported disk is checked by
// (QEMU's docs/interop/qcow2.txt).
const (
	qcowMagic = 0x514649fb // "QFI\xfb"

	incompatDirty      = 1 << 0
	incompatCorrupt    = 1 << 1
	incompatDataFile   = 1 << 2
	incompatCompress   = 1 << 3
	incompatExtendedL2 = 1 << 4

	extEnd          = 0x00000000
	extBackingFmt   = 0xe2792aca
	extFeatureTable = 0x6803f857
	extBitmaps      = 0x23852875
	extEncryption   = 0x0537be77
	extDataFile     = 0x44415441
)

// hostile is a refusal of an imported disk, in words.
func hostile(why string, args ...any) error {
	return &providers.RefusedError{Why: "The archive's disk is refused: " + fmt.Sprintf(why, args...) + "."}
}

// checkQcow2Header reads an imported qcow2's header itself, before any
// qemu-img opens it, since qemu-img follows what a header names: it must be
// a plain qcow2 (version 2 or 3, not encrypted, no external data file, no
// feature this check does not know, no internal snapshots) whose backing
// file is none, or exactly baseName when incremental is set.
func checkQcow2Header(path string, incremental bool) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	head := make([]byte, 4096)
	n, err := io.ReadFull(f, head)
	if err != nil && err != io.ErrUnexpectedEOF {
		return hostile("it cannot be read: %v", err)
	}
	head = head[:n]
	if len(head) < 72 || binary.BigEndian.Uint32(head) != qcowMagic {
		return hostile("it is not a qcow2 image")
	}
	be := binary.BigEndian
	version := be.Uint32(head[4:])
	if version != 2 && version != 3 {
		return hostile("its qcow2 version %d is not 2 or 3", version)
	}
	if be.Uint32(head[32:]) != 0 {
		return hostile("it is encrypted")
	}
	if be.Uint32(head[60:]) != 0 {
		return hostile("it holds snapshots of its own")
	}
	if size := be.Uint64(head[24:]); size > maxVirtual {
		return hostile("its size of %d bytes is past the %d a disk may have", size, uint64(maxVirtual))
	}
	extAt := uint32(72)
	if version == 3 {
		if len(head) < 104 {
			return hostile("its header is cut short")
		}
		incompat := be.Uint64(head[72:])
		switch {
		case incompat&incompatDataFile != 0:
			return hostile("it keeps its data in an external file")
		case incompat&(incompatDirty|incompatCorrupt) != 0:
			return hostile("it is marked dirty or corrupt")
		case incompat&^uint64(incompatCompress|incompatExtendedL2) != 0:
			return hostile("it needs features this check does not know (%#x)", incompat)
		}
		if be.Uint64(head[88:])&1 != 0 { // autoclear: raw external data
			return hostile("it keeps its data in an external file")
		}
		extAt = be.Uint32(head[100:])
	}
	if err := checkQcow2Extensions(head, extAt); err != nil {
		return err
	}
	off, size := be.Uint64(head[8:]), be.Uint32(head[16:])
	if off == 0 && size == 0 {
		if incremental {
			return hostile("it names no base, yet its archive says it is incremental")
		}
		return nil
	}
	if !incremental {
		return hostile("it names a backing file, yet its archive says it is whole")
	}
	if size != uint32(len(baseName)) || off+uint64(size) > uint64(len(head)) || string(head[off:off+uint64(size)]) != baseName {
		return hostile("it names a backing file other than its base")
	}
	return nil
}

// checkQcow2Extensions walks the header extensions from at: an external
// data file or encryption is refused; an unknown extension is skipped, as
// QEMU skips it.
func checkQcow2Extensions(head []byte, at uint32) error {
	be := binary.BigEndian
	for i := 0; i < 64; i++ {
		if uint64(at)+8 > uint64(len(head)) {
			return hostile("its header extensions run past its first 4 KiB")
		}
		typ, n := be.Uint32(head[at:]), be.Uint32(head[at+4:])
		switch typ {
		case extEnd:
			return nil
		case extDataFile:
			return hostile("it keeps its data in an external file")
		case extEncryption:
			return hostile("it is encrypted")
		case extBackingFmt:
			if end := uint64(at) + 8 + uint64(n); end > uint64(len(head)) || string(head[at+8:end]) != "qcow2" {
				return hostile("its base is not a qcow2")
			}
		case extFeatureTable, extBitmaps:
		}
		at += 8 + (n+7)&^7
	}
	return hostile("its header has too many extensions")
}

// qcow2Info is what qemu-img info says of an image, as far as an import
// checks it.
type qcow2Info struct {
	Format      string `json:"format"`
	VirtualSize int64  `json:"virtual-size"`
	Backing     string `json:"backing-filename"`
	BackingFmt  string `json:"backing-filename-format"`
	Dirty       bool   `json:"dirty-flag"`
	Specific    struct {
		Data struct {
			DataFile string `json:"data-file"`
			Corrupt  bool   `json:"corrupt"`
		} `json:"data"`
	} `json:"format-specific"`
}

// checkQcow2 checks an imported disk: its header first (checkQcow2Header),
// then what qemu-img info says of it, opened as qcow2 only (never probed)
// and without its backing file, which must agree.
func checkQcow2(ctx context.Context, path string, incremental bool) (qcow2Info, error) {
	if err := checkQcow2Header(path, incremental); err != nil {
		return qcow2Info{}, err
	}
	cmd := exec.CommandContext(ctx, "qemu-img", "info", "-U", "-f", "qcow2", "--output=json", path)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Run(); err != nil {
		return qcow2Info{}, hostile("qemu-img cannot read it: %s", strings.TrimSpace(errOut.String()))
	}
	var info qcow2Info
	if err := json.Unmarshal(out.Bytes(), &info); err != nil {
		return info, hostile("qemu-img's account of it cannot be read: %v", err)
	}
	want := ""
	if incremental {
		want = baseName
	}
	switch {
	case info.Format != "qcow2":
		return info, hostile("it is %q, not a qcow2", info.Format)
	case info.Backing != want:
		return info, hostile("it names a backing file other than its base")
	case info.Specific.Data.DataFile != "":
		return info, hostile("it keeps its data in an external file")
	case info.Dirty || info.Specific.Data.Corrupt:
		return info, hostile("it is marked dirty or corrupt")
	case info.VirtualSize <= 0 || info.VirtualSize > maxVirtual:
		return info, hostile("its size of %d bytes is not one a disk may have", info.VirtualSize)
	}
	return info, nil
}
