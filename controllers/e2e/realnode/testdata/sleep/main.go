// Command sleep waits the number of seconds in its last argument, holding
// $SLEEP_HOLD_MIB MiB of memory meanwhile (touched, so it counts). The
// real-node tests put it in a runner image so that a local-exec
// provisioner can make an apply slow, or hungry: the runner image has no
// shell.
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
	var held [][]byte
	if mib, _ := strconv.Atoi(os.Getenv("SLEEP_HOLD_MIB")); mib > 0 {
		for range mib {
			b := make([]byte, 1<<20)
			for i := 0; i < len(b); i += 4096 {
				b[i] = 1
			}
			held = append(held, b)
		}
	}
	time.Sleep(time.Duration(s) * time.Second)
	_ = len(held)
}
