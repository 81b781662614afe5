// Command durable measures what making a freshly written tree survive a
// power cut costs, as a restore or a fork must before it says done: one
// syncfs of the tree's file system, or an fsync of each file and folder
// written, one at a time or eight at once. Each round copies the source
// (cp -a, as a restore writes a box's files) onto a file system that a
// sync left clean, then makes the copy durable one way, and prints the
// copy's time, the dirty bytes waiting when the sync began, and the sync's
// time. bench/durable/run.sh builds and runs it on a copy of /usr/share.
package main

import (
	"bufio"
	"flag"
	"fmt"
	"io/fs"
	"log"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"golang.org/x/sys/unix"
)

func main() {
	src := flag.String("src", "/usr/share", "the tree to copy")
	dst := flag.String("dir", "/tmp/boxsnap-bench-durable", "where the copy goes (deleted after)")
	rounds := flag.Int("rounds", 1, "rounds of the three ways")
	flag.Parse()
	defer os.RemoveAll(*dst)
	for round := 1; round <= *rounds; round++ {
		for _, way := range []string{"syncfs", "fsync each, 1 at once", "fsync each, 8 at once"} {
			if err := once(*src, *dst, round, way); err != nil {
				log.Fatal(err)
			}
		}
	}
}

// once copies src to dst and makes the copy durable one way.
func once(src, dst string, round int, way string) error {
	if err := os.RemoveAll(dst); err != nil {
		return err
	}
	unix.Sync() // the removal and other writers' dirt, off the disk first
	start := time.Now()
	if out, err := exec.Command("cp", "-a", src, dst).CombinedOutput(); err != nil {
		return fmt.Errorf("cp -a: %v: %s", err, out)
	}
	copied := time.Since(start)
	dirty := dirtyBytes()
	start = time.Now()
	var err error
	switch way {
	case "syncfs":
		err = syncfs(dst)
	case "fsync each, 1 at once":
		err = fsyncEach(dst, 1)
	default:
		err = fsyncEach(dst, 8)
	}
	if err != nil {
		return err
	}
	synced := time.Since(start)
	fmt.Printf("round %d  %-22s copy %6.2f s  dirty at the sync %5.0f MB  sync %6.2f s\n",
		round, way, copied.Seconds(), float64(dirty)/1e6, synced.Seconds())
	return nil
}

// syncfs makes one syncfs of dir's file system.
func syncfs(dir string) error {
	f, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer f.Close()
	return unix.Syncfs(int(f.Fd()))
}

// fsyncEach fsyncs every file and folder under dir, n at once.
func fsyncEach(dir string, n int) error {
	paths := make(chan string, 1024)
	errs := make(chan error, n)
	var wg sync.WaitGroup
	for range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for p := range paths {
				f, err := os.Open(p)
				if err == nil {
					err = f.Sync()
					f.Close()
				}
				if err != nil {
					select {
					case errs <- err:
					default:
					}
				}
			}
		}()
	}
	werr := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && (d.Type().IsRegular() || d.IsDir()) {
			paths <- p
		}
		return err
	})
	close(paths)
	wg.Wait()
	if werr != nil {
		return werr
	}
	select {
	case err := <-errs:
		return err
	default:
		return nil
	}
}

// dirtyBytes is the kernel's Dirty and Writeback memory: bytes written
// and not yet on disk.
func dirtyBytes() int64 {
	f, err := os.Open("/proc/meminfo")
	if err != nil {
		return 0
	}
	defer f.Close()
	var n int64
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		k, v, _ := strings.Cut(sc.Text(), ":")
		if k == "Dirty" || k == "Writeback" {
			kb, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			n += kb << 10
		}
	}
	return n
}
