// Package view is what kubectl-magos shows, as pure functions of the
// objects and plans it is given: the columns of get and the UI's tables,
// the tree of a Project, a plan as plan show writes it, the difference of
// two plans, the check report, the messages an action answers with, the
// UI's view model, and the filter that keeps what a terminal would act
// on out of everything printed. No client and no I/O: the commands and
// the UI read the cluster (package ops) and hand the result here.
package view
