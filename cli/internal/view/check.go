package view

import (
	"fmt"
	"io"
	"text/tabwriter"
)

// CheckStatus is the outcome of one check.
type CheckStatus string

// Outcomes of a check.
const (
	CheckOK   CheckStatus = "ok"
	CheckWarn CheckStatus = "warn"
	CheckFail CheckStatus = "fail"
)

// CheckResult is one line of `kubectl magos check`.
type CheckResult struct {
	Name   string
	Status CheckStatus
	// Detail says what was found; Advice what to do when not ok.
	Detail, Advice string
}

// WriteChecks writes the results as a table, advice under each check that
// is not ok.
func WriteChecks(out io.Writer, results []CheckResult) {
	w := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	for _, r := range results {
		fmt.Fprintf(w, "%s\t%s\t%s\n", r.Status, r.Name, r.Detail)
		if r.Advice != "" {
			fmt.Fprintf(w, "\t\t→ %s\n", r.Advice)
		}
	}
	_ = w.Flush()
}
