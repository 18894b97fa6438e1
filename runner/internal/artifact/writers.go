package artifact

import (
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"sync"
	"syscall"
)

// Creating a file costs the filesystem more than decompressing it costs the
// runner (on ext4, ~250µs per small file against ~30µs), so small files are
// read into memory and written by a few goroutines while the archive is
// read on. Larger files are written as they are read.
const (
	// smallFile is the largest file handed to the writers.
	smallFile = 256 << 10
	// queuedFiles bounds the files read but not yet written, so at most
	// (queuedFiles + writers) × smallFile bytes are held in memory.
	queuedFiles = 64
)

// fileJob is one small file to write.
type fileJob struct {
	name string
	perm os.FileMode
	data *[]byte
}

// writers writes small files concurrently and remembers the first error.
type writers struct {
	x    *extraction
	jobs chan fileJob
	// done counts the writer goroutines; pending counts jobs not written.
	done, pending sync.WaitGroup
	// free holds the buffers of written files for reuse: at most
	// queuedFiles + writers + 1 are ever made.
	free chan *[]byte

	mu  sync.Mutex
	err error
}

func startWriters(x *extraction) *writers {
	n := min(max(runtime.GOMAXPROCS(0), 1), 4)
	w := &writers{x: x, jobs: make(chan fileJob, queuedFiles), free: make(chan *[]byte, queuedFiles+n+1)}
	for range n {
		w.done.Go(func() {
			for job := range w.jobs {
				if w.failed() == nil {
					w.fail(w.write(job))
				}
				w.release(job.data)
				w.pending.Done()
			}
		})
	}
	return w
}

// queue reads the size bytes of name from r and hands them to a writer.
func (w *writers) queue(name string, perm os.FileMode, size int64, r io.Reader) error {
	data := w.buffer()
	*data = (*data)[:size]
	if _, err := io.ReadFull(r, *data); err != nil {
		w.release(data)
		return fmt.Errorf("%w: reading %q: %w", ErrRejected, name, err)
	}
	w.pending.Add(1)
	w.jobs <- fileJob{name: name, perm: perm, data: data}
	return nil
}

// buffer returns a free buffer of capacity smallFile.
func (w *writers) buffer() *[]byte {
	select {
	case b := <-w.free:
		return b
	default:
		b := make([]byte, 0, smallFile)
		return &b
	}
}

// release keeps b for the next file.
func (w *writers) release(b *[]byte) {
	select {
	case w.free <- b:
	default:
	}
}

// write creates one file with its content.
func (w *writers) write(job fileJob) error {
	f, err := w.x.create(job.name, job.perm)
	if err != nil {
		return err
	}
	_, err = f.Write(*job.data)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return writeError("writing", job.name, err)
	}
	return nil
}

// wait returns once every queued file is written, with the first error.
func (w *writers) wait() error {
	w.pending.Wait()
	return w.failed()
}

// stop ends the writers after the queued files and returns the first error.
func (w *writers) stop() error {
	close(w.jobs)
	w.done.Wait()
	return w.failed()
}

func (w *writers) fail(err error) {
	if err == nil {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.err == nil {
		w.err = err
	}
}

func (w *writers) failed() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.err
}

// create creates (or truncates) the regular file name, making its directory.
func (x *extraction) create(name string, perm os.FileMode) (*os.File, error) {
	parent, base, err := x.parent(name)
	if err != nil {
		return nil, writeError("directory of", name, err)
	}
	f, err := parent.OpenFile(base, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, perm)
	if err != nil {
		return nil, writeError("file", name, err)
	}
	return f, nil
}

// writeError describes a failure to create or write name. One the
// archive's own tree causes (a file where a directory must be, a name too
// long) rejects the artifact; any other (a full disk, too many open files)
// is the runner's and is worth retrying, so it does not wrap ErrRejected.
func writeError(what, name string, err error) error {
	for _, tree := range []error{syscall.ENOTDIR, syscall.EISDIR, syscall.EEXIST, syscall.ENAMETOOLONG, syscall.ELOOP} {
		if errors.Is(err, tree) {
			return fmt.Errorf("%w: %s %q: %w", ErrRejected, what, name, err)
		}
	}
	return fmt.Errorf("extracting the artifact: %s %q: %w", what, name, err)
}
