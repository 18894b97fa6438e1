package executor

import (
	"io"
	"os"

	corev1 "k8s.io/api/core/v1"
)

// terminationMessage is what the kubelet puts into a terminated
// container's message: the first MaxTerminationMessageBytes of the file the
// container wrote, or, with FallbackToLogsOnError, the tail of its log when
// it failed without writing one.
func terminationMessage(path string, policy corev1.TerminationMessagePolicy, exitCode int32, log string) string {
	msg := readHead(path, MaxTerminationMessageBytes)
	if msg == "" && exitCode != 0 && policy == corev1.TerminationMessageFallbackToLogsOnError {
		return readTail(log, fallbackLogLines, fallbackLogBytes)
	}
	return msg
}

func readHead(path string, n int64) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, n))
	if err != nil {
		return ""
	}
	return string(data)
}
