// Package planrender renders a plan for people from its plan JSON (the
// engine's `show -json`), the document the plan digest covers and the
// apply proves it applies. It is what `kubectl magos plan show` and the UI
// show an approver.
//
// The text the plan run stored beside the plan (plan.txt) cannot be shown
// as the plan: the run executed the configuration's code, which can write
// into the engine's output or make the run store other text, and the digest
// does not cover that text. A rendering made here from the digest-checked
// JSON says only what the JSON says.
//
// The rendering follows the engine's layout (a "# <address> will be
// created" comment, then the resource's attributes with +, ~ and -) but is
// not byte-for-byte the engine's: the JSON has no schema, so nested blocks
// and map attributes look alike, and unchanged attributes are counted, not
// listed. Values marked sensitive in the JSON are never shown; values the
// runner masks in its own output but the configuration does not mark
// sensitive are in the JSON, as `plan show --json` prints them. Every
// string from the JSON is quoted or escaped, so no control character
// reaches a terminal.
package planrender
