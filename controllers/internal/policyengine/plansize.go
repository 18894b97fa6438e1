package policyengine

import "fmt"

// DefaultMaxPlanMemory bounds the memory a plan may take once decoded for
// evaluation, as estimated by decodedSize.
const DefaultMaxPlanMemory = 256 << 20

// Costs of decoded JSON in a Go heap (encoding/json into any), measured
// with Go 1.26 and rounded up: an object is a map (about 350 bytes with its
// first group of slots), an array a slice header and its backing array, a
// key or element an interface slot and its boxed value.
const (
	objectCost = 360
	arrayCost  = 64
	valueCost  = 32
)

// decodedSize estimates, without decoding, how many bytes planJSON takes
// once decoded: the text plus the cost of every object, array and value.
// Decoding can take 40 times the text's size (a list of one-key objects),
// so the text's size alone says little. The estimate errs high.
func decodedSize(planJSON []byte) int64 {
	var objects, arrays, values int64
	inString, escaped := false, false
	for _, c := range planJSON {
		switch {
		case escaped:
			escaped = false
		case inString:
			switch c {
			case '\\':
				escaped = true
			case '"':
				inString = false
			}
		default:
			switch c {
			case '"':
				inString = true
			case '{':
				objects++
			case '[':
				arrays++
			case ',', ':':
				values++
			}
		}
	}
	return int64(len(planJSON)) + objects*objectCost + arrays*arrayCost + (values+1)*valueCost
}

// checkPlanSize refuses plan JSON whose decoded form would take more than
// limit bytes; limit <= 0 means no bound.
func checkPlanSize(planJSON []byte, limit int64) error {
	if limit <= 0 {
		return nil
	}
	if est := decodedSize(planJSON); est > limit {
		return fmt.Errorf("the plan JSON (%d bytes) would take about %d MiB to decode, more than the limit of %d MiB",
			len(planJSON), est>>20, limit>>20)
	}
	return nil
}
