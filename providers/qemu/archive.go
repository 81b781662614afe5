package qemu

import (
	"archive/tar"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"
)

// An archive of a QEMU snapshot is a gzip-compressed tar holding, in this
// order:
//
//	boxsnap-archive.json  what it is (archiveInfo): the snapshot's ID, member
//	                      name, parent, the base it is incremental against,
//	                      its template, and its disk's SHA-256 and size
//	disk.qcow2            the snapshot's disk as a qcow2 of its own: whole,
//	                      or, against a base, only what differs from the
//	                      base's disk, its backing file named baseName
//
// A snapshot with memory is exported as its disk: its memory belongs to the
// QEMU that ran it. The label is not carried: an import writes its own.
const (
	archiveMeta   = "boxsnap-archive.json"
	archiveDisk   = "disk.qcow2"
	archiveFormat = 1
	// archiveKind tells a QEMU snapshot's archive from another backend's.
	archiveKind = "qemu-qcow2"
	// maxMetaBytes bounds the archive's first member, read into memory.
	maxMetaBytes = 64 << 10
)

// archiveInfo is an archive's first member.
type archiveInfo struct {
	Format     int       `json:"format"`
	Kind       string    `json:"kind"`
	ID         string    `json:"id"`
	Name       string    `json:"name"`
	Parent     string    `json:"parent,omitempty"`
	Base       string    `json:"base,omitempty"`
	Template   string    `json:"template"`
	Reset      int       `json:"resetVersion,omitempty"`
	TakenAt    time.Time `json:"takenAt"`
	DiskSha256 string    `json:"diskSha256"`
	DiskBytes  int64     `json:"diskBytes"`
}

// writeArchive writes the archive's two members.
func writeArchive(info archiveInfo, disk string, w io.Writer) error {
	f, err := os.Open(disk)
	if err != nil {
		return err
	}
	defer f.Close()
	// A qcow2 leaves out what the guest never wrote; the rest is mostly
	// file data, where the fastest level keeps an export near the disk's
	// speed.
	zw, err := gzip.NewWriterLevel(w, gzip.BestSpeed)
	if err != nil {
		return err
	}
	tw := tar.NewWriter(zw)
	now := time.Now().UTC()
	meta, err := json.Marshal(info)
	if err != nil {
		return err
	}
	if err := tw.WriteHeader(&tar.Header{Name: archiveMeta, Mode: 0o600, Size: int64(len(meta)), ModTime: now, Typeflag: tar.TypeReg}); err != nil {
		return fmt.Errorf("export snapshot %s: %w", info.ID, err)
	}
	if _, err := tw.Write(meta); err != nil {
		return fmt.Errorf("export snapshot %s: %w", info.ID, err)
	}
	if err := tw.WriteHeader(&tar.Header{Name: archiveDisk, Mode: 0o600, Size: info.DiskBytes, ModTime: now, Typeflag: tar.TypeReg}); err != nil {
		return fmt.Errorf("export snapshot %s: %w", info.ID, err)
	}
	if _, err := io.Copy(tw, f); err != nil {
		return fmt.Errorf("export snapshot %s: %w", info.ID, err)
	}
	if err := tw.Close(); err != nil {
		return fmt.Errorf("export snapshot %s: %w", info.ID, err)
	}
	return zw.Close()
}

// fileSum is a file's SHA-256 and size.
func fileSum(path string) (string, int64, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", 0, err
	}
	defer f.Close()
	h := sha256.New()
	n, err := io.Copy(h, f)
	if err != nil {
		return "", 0, err
	}
	return hex.EncodeToString(h.Sum(nil)), n, nil
}

// workDir makes a private folder for one export's or import's files, in
// the backend's folder (the same file system its disks are on).
func (b *archives) workDir(prefix string) (string, error) {
	top := filepath.Join(b.cfg.Dir, workDirName)
	if err := os.MkdirAll(top, 0o700); err != nil {
		return "", fmt.Errorf("make %s: %w", top, err)
	}
	return os.MkdirTemp(top, prefix)
}

// workDirName is the folder, in the backend's folder, of exports' and
// imports' files while they run.
const workDirName = "work"
