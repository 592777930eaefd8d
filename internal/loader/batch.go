package loader

import (
	"context"
	"sync"

	"golang.org/x/sync/errgroup"
)

// Ordered runs work(i) for every i in [0, n) on up to workers goroutines and
// hands each result to emit in index order, from the calling goroutine, so
// that emit needs no locking and output order never depends on scheduling.
//
// At most 2×workers items are in flight (started but not yet emitted), which
// bounds memory by the window, not by n. The first error from work or emit
// cancels the rest and is returned.
func Ordered[R any](ctx context.Context, n, workers int, work func(ctx context.Context, i int) (R, error), emit func(i int, r R) error) error {
	if workers < 1 {
		workers = 1
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	g, gctx := errgroup.WithContext(ctx)

	type item struct {
		i int
		r R
	}
	window := 2 * workers
	slots := make(chan struct{}, window)
	jobs := make(chan int)
	results := make(chan item, window)

	g.Go(func() error {
		defer close(jobs)
		for i := 0; i < n; i++ {
			select {
			case slots <- struct{}{}:
			case <-gctx.Done():
				return nil
			}
			select {
			case jobs <- i:
			case <-gctx.Done():
				return nil
			}
		}
		return nil
	})
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		g.Go(func() error {
			defer wg.Done()
			for i := range jobs {
				r, err := work(gctx, i)
				if err != nil {
					return err
				}
				select {
				case results <- item{i, r}:
				case <-gctx.Done():
					return nil
				}
			}
			return nil
		})
	}
	go func() {
		wg.Wait()
		close(results)
	}()

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
	if err := g.Wait(); err != nil {
		return err
	}
	if emitErr != nil {
		return emitErr
	}
	return ctx.Err()
}
