// Package cli implements kubectl-magos, the kubectl plugin for day-2
// operations on Magos objects. Every command reads status and writes only
// the spec fields and annotations the controllers already honour; each
// command or group of commands lives in its own file.
package command
