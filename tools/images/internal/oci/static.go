package oci

import (
	"bytes"
	"debug/elf"
	"fmt"
)

// checkStatic returns an error if data is an ELF executable that needs a
// dynamic loader: the images have no libc, so such a binary could not
// start. Other files pass.
func checkStatic(path string, data []byte) error {
	if !bytes.HasPrefix(data, []byte(elf.ELFMAG)) {
		return nil
	}
	f, err := elf.NewFile(bytes.NewReader(data))
	if err != nil {
		return fmt.Errorf("%w: %s: %w", ErrInvalidSpec, path, err)
	}
	defer f.Close()
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			return fmt.Errorf("%w: %s is dynamically linked (the images have no libc; build it with CGO_ENABLED=0)", ErrInvalidSpec, path)
		}
	}
	return nil
}
