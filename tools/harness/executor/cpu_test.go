package executor

import (
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParseProcStat(t *testing.T) {
	for _, tc := range []struct {
		name string
		stat string
		want ProcStat
		err  bool
	}{
		{
			name: "plain name",
			stat: "4242 (runner) Z 1 4242 4242 0 -1 4227084 300 0 0 0 12 3 40 7 20 0 5 0 100 0 0",
			want: ProcStat{Comm: "runner", PPID: 1, Self: 150 * time.Millisecond, Children: 470 * time.Millisecond},
		},
		{
			name: "name with spaces and parentheses",
			stat: "7 (a (b) c) Z 3 7 7 0 -1 0 0 0 0 0 1 1 0 0 20 0 1 0 0 0 0",
			want: ProcStat{Comm: "a (b) c", PPID: 3, Self: 20 * time.Millisecond},
		},
		{name: "truncated", stat: "7 (runner) Z 1 7 7", err: true},
		{name: "no name", stat: "garbage", err: true},
		{name: "not a number", stat: "7 (runner) Z 1 7 7 0 -1 0 0 0 0 0 x 1 0 0 20", err: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := parseProcStat(tc.stat)
			if tc.err {
				assert.Error(t, err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.want, got)
		})
	}
}

func TestReadProcStatOfThisProcess(t *testing.T) {
	st, err := ReadProcStat(os.Getpid())
	require.NoError(t, err)
	assert.Equal(t, os.Getppid(), st.PPID)
	assert.NotEmpty(t, st.Comm)
}
