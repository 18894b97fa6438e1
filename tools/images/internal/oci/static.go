package oci

import (
	"bytes"
	"debug/elf"
	"fmt"
	"path"
	"strings"
)

// checkLinked returns an error for each ELF executable or library among
// files that could not start in the image: one that needs a dynamic loader
// or a shared library the image does not hold (by file name, in any
// directory). An image of static binaries has no libc, so a binary built
// with cgo fails here, not when its container starts.
func checkLinked(files []Entry) []error {
	have := map[string]bool{}
	for _, f := range files {
		if !f.Dir {
			have[path.Clean(f.Path)] = true
			have[path.Base(f.Path)] = true
		}
	}
	var errs []error
	for _, f := range files {
		if f.Dir || !bytes.HasPrefix(f.Data, []byte(elf.ELFMAG)) {
			continue
		}
		if err := checkELF(f.Path, f.Data, have); err != nil {
			errs = append(errs, err)
		}
	}
	return errs
}

func checkELF(name string, data []byte, have map[string]bool) error {
	f, err := elf.NewFile(bytes.NewReader(data))
	if err != nil {
		return fmt.Errorf("%w: %s: %w", ErrInvalidSpec, name, err)
	}
	defer f.Close()
	for _, p := range f.Progs {
		if p.Type != elf.PT_INTERP {
			continue
		}
		b := make([]byte, p.Filesz)
		if _, err := p.ReadAt(b, 0); err != nil {
			return fmt.Errorf("%w: %s: reading its loader: %w", ErrInvalidSpec, name, err)
		}
		if loader := strings.TrimRight(string(b), "\x00"); !have[path.Clean(loader)] {
			return fmt.Errorf("%w: %s is dynamically linked and the image has no %s (the images have no libc; build it with CGO_ENABLED=0 or add its loader and libraries)",
				ErrInvalidSpec, name, loader)
		}
	}
	libs, err := f.ImportedLibraries()
	if err != nil {
		return fmt.Errorf("%w: %s: %w", ErrInvalidSpec, name, err)
	}
	var missing []string
	for _, l := range libs {
		if !have[l] {
			missing = append(missing, l)
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("%w: %s needs %s, which the image does not hold", ErrInvalidSpec, name, strings.Join(missing, ", "))
	}
	return nil
}
