package local

import (
	"context"
	"syscall"
	"time"
)

// Close ends every box process this backend started, as boxsnap stops: the
// processes are its children and would otherwise outlive it. Unlike Stop, it
// leaves each box marked running, so RestartRunning starts it again at the
// next start.
func (b *Backend) Close(ctx context.Context) error {
	b.EndJournals()
	b.Grow.Stop()
	b.mu.Lock()
	procs := b.procs
	b.procs = make(map[string]*proc)
	b.mu.Unlock()
	for _, p := range procs {
		if p.exited() {
			continue
		}
		p.terminate()
		_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGCONT)
	}
	for _, p := range procs {
		timer := time.NewTimer(b.stopTO)
		select {
		case <-p.done:
		case <-timer.C:
		case <-ctx.Done():
		}
		timer.Stop()
		_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
		<-p.done
	}
	return nil
}
