package apiserver

import (
	"fmt"
	"strings"
	"testing"
)

// TestSeenApprovalsBounded: a run that asks endless approvals, with long
// ids, cannot grow the set of approvals it remembers as delivered.
func TestSeenApprovalsBounded(t *testing.T) {
	t.Parallel()
	rs := &runState{seenApprovals: map[string]bool{}}
	long := strings.Repeat("x", 4096)
	for i := range 3 * maxSeenApprovals {
		rs.markSeen(fmt.Sprint(long, i))
	}
	if n := len(rs.seenApprovals); n > maxSeenApprovals {
		t.Fatalf("%d approvals remembered, bound %d", n, maxSeenApprovals)
	}
	for k := range rs.seenApprovals {
		if len(k) > 64+len("sha256:") {
			t.Fatalf("a %d-byte key is kept whole", len(k))
		}
	}
	rs.markSeen("srq-1")
	if !rs.seenApprovals[seenKey("srq-1")] {
		t.Fatal("a short id is not found by its key")
	}
}
