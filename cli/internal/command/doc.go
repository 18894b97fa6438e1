// Package command is kubectl-magos's cobra wiring: the root command and
// each command's flags and arguments, which call the operations of package
// ops (or clustercheck for check) and print what package view makes of
// their results; `ui` starts package ui's server. Every command reads
// status and writes only the spec fields and annotations the controllers
// already honour; each command or group of commands lives in its own file.
// Errors are package failure's, whose codes are the process's exit codes.
package command
