package executor

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
)

// LogPath is the file that holds the stdout and stderr of a Pod's process.
func (e *Executor) LogPath(namespace, pod string) string {
	return logPath(e.opts.LogDir, namespace, pod)
}

func logPath(dir, namespace, pod string) string {
	return filepath.Join(dir, fmt.Sprintf("%s_%s.log", namespace, pod))
}

// lockedWriter serialises writes from several processes to one writer.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// prefixWriter writes whole lines to out, each prefixed; a partial last
// line waits for its end or for Close.
type prefixWriter struct {
	out    io.Writer
	prefix []byte
	buf    []byte
}

func (p *prefixWriter) Write(b []byte) (int, error) {
	p.buf = append(p.buf, b...)
	for {
		i := bytes.IndexByte(p.buf, '\n')
		if i < 0 {
			return len(b), nil
		}
		line := append(append([]byte{}, p.prefix...), p.buf[:i+1]...)
		p.buf = p.buf[i+1:]
		if _, err := p.out.Write(line); err != nil {
			return len(b), err
		}
	}
}

// Close flushes a partial last line.
func (p *prefixWriter) Close() error {
	if len(p.buf) == 0 {
		return nil
	}
	line := append(append(append([]byte{}, p.prefix...), p.buf...), '\n')
	p.buf = nil
	_, err := p.out.Write(line)
	return err
}

// readTail returns at most maxLines last lines and maxBytes last bytes of a
// file, as the kubelet's FallbackToLogsOnError does.
func readTail(path string, maxLines, maxBytes int) string {
	data, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	data = bytes.TrimRight(data, "\n")
	lines := 0
	for i := len(data) - 1; i >= 0; i-- {
		if data[i] == '\n' {
			lines++
			if lines == maxLines {
				data = data[i+1:]
				break
			}
		}
	}
	if len(data) > maxBytes {
		data = data[len(data)-maxBytes:]
	}
	return string(data)
}
