package loader

import (
	"context"
	"sync"

	"golang.org/x/sync/errgroup"
)

// windowPerWorker is how many items per worker Ordered lets be in flight.
const windowPerWorker = 8

// Ordered runs work(i) for every i in [0, n) on up to workers goroutines and
// hands each result to emit in index order, from the calling goroutine, so
// that emit needs no locking and output order never depends on scheduling.
//
// At most 8×workers items are in flight (started but not yet emitted), which
// bounds memory by the window, not by n. The window is that wide so that one
// slow item (a large file) does not stall the other workers after a few items
// while its result blocks the emitter (with 2×workers, a default run of the
// real corpus on 2 cores took about 5 % more wall time). The first error
// from work or emit cancels the rest and is returned.
func Ordered[R any](ctx context.Context, n, workers int, work func(ctx context.Context, i int) (R, error), emit func(i int, r R) error) error {
	if workers < 1 {
		workers = 1
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	g, gctx := errgroup.WithContext(ctx)

	window := windowPerWorker * workers
	slots := make(chan struct{}, window)
	jobs := make(chan int)
	results := make(chan orderedItem[R], window)

	g.Go(func() error {
		feedJobs(gctx, n, slots, jobs)
		return nil
	})
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		g.Go(func() error {
			defer wg.Done()
			return runJobs(gctx, jobs, results, work)
		})
	}
	go func() {
		wg.Wait()
		close(results)
	}()

	emitErr := emitInOrder(results, slots, window, emit, cancel)
	if err := g.Wait(); err != nil {
		return err
	}
	if emitErr != nil {
		return emitErr
	}
	return ctx.Err()
}

// orderedItem is the result of item i.
type orderedItem[R any] struct {
	i int
	r R
}

// feedJobs sends the indices [0, n) to jobs, each once a slot of the window
// is free, and closes jobs; it stops when ctx is done.
func feedJobs(ctx context.Context, n int, slots chan<- struct{}, jobs chan<- int) {
	defer close(jobs)
	for i := 0; i < n; i++ {
		select {
		case slots <- struct{}{}:
		case <-ctx.Done():
			return
		}
		select {
		case jobs <- i:
		case <-ctx.Done():
			return
		}
	}
}

// runJobs runs work on the indices from jobs and sends the results on; it
// returns work's first error, or nil when jobs closes or ctx is done.
func runJobs[R any](ctx context.Context, jobs <-chan int, results chan<- orderedItem[R], work func(ctx context.Context, i int) (R, error)) error {
	for i := range jobs {
		r, err := work(ctx, i)
		if err != nil {
			return err
		}
		select {
		case results <- orderedItem[R]{i, r}:
		case <-ctx.Done():
			return nil
		}
	}
	return nil
}

// emitInOrder hands the results to emit in index order, freeing a slot of
// the window for each. After emit's first error it cancels the rest,
// drains the results so that the workers can finish, and returns it.
func emitInOrder[R any](results <-chan orderedItem[R], slots <-chan struct{}, window int, emit func(i int, r R) error, cancel func()) error {
	pending := make(map[int]R, window)
	next := 0
	var emitErr error
	for it := range results {
		if emitErr != nil {
			continue // drain so workers can finish
		}
		pending[it.i] = it.r
		for {
			r, ok := pending[next]
			if !ok {
				break
			}
			delete(pending, next)
			if err := emit(next, r); err != nil {
				emitErr = err
				cancel()
				break
			}
			next++
			<-slots
		}
	}
	return emitErr
}
