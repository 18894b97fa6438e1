// Command sleep waits the number of seconds in its last argument. The
// real-node tests put it in a runner image so that a local-exec
// provisioner can make an apply slow: the runner image has no shell.
package main

import (
	"fmt"
	"os"
	"strconv"
	"time"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: sleep SECONDS")
		os.Exit(2)
	}
	s, err := strconv.Atoi(os.Args[len(os.Args)-1])
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	time.Sleep(time.Duration(s) * time.Second)
}
