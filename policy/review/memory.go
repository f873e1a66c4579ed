package review

import (
	"context"
	"fmt"

	"github.com/catalogbot/catalogbot/policy/review/pipeline"
)

// Memory is the memory a service's checks share: a check holds several
// times the catalog bytes it reads, so before reading any it reserves
// them, and waits while other checks hold too much. The App's is
// webhook/membudget's Budget; the command line and the Action check one
// pull request per process and have none.
type Memory interface {
	// Size is the most a check may reserve; 0 for no limit.
	Size() int64
	// Acquire reserves n bytes until release is called, waiting (within
	// ctx) while others hold them.
	Acquire(ctx context.Context, n int64) (release func(), err error)
}

// MemoryError is a check that would read more catalog bytes than the
// service may hold for all its checks at once. It says nothing of the
// catalog: the same change passes on a service with more memory. Render
// it with TooLargeForMemory.
type MemoryError struct {
	// Reads is what the check would read; Budget is the service's
	// whole budget.
	Reads  pipeline.Reads
	Budget int64
}

func (e *MemoryError) Error() string {
	return fmt.Sprintf("too large for this service's memory: the check would read %s of catalog files, and the service's checks may hold %s at once",
		pipeline.BytesText(e.Reads.Bytes), pipeline.BytesText(e.Budget))
}

// reserve reserves in mem what the checks of in will read, once the
// policy is known (its roots and limits decide what is read). A check
// that would read more than the whole budget is a MemoryError.
func reserve(ctx context.Context, mem Memory, in *pipeline.Input) (release func(), err error) {
	if mem == nil || mem.Size() <= 0 {
		return func() {}, nil
	}
	reads, err := in.Reads()
	if err != nil {
		return nil, err
	}
	if reads.Bytes > mem.Size() {
		return nil, &MemoryError{Reads: reads, Budget: mem.Size()}
	}
	release, err = mem.Acquire(ctx, reads.Bytes)
	if err != nil {
		return nil, fmt.Errorf("wait for memory to read %s of catalog files: %w", pipeline.BytesText(reads.Bytes), err)
	}
	return release, nil
}
