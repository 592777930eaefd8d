package loader

import (
	"context"
	"sync"

	"golang.org/x/sync/errgroup"
)

// windowPerWorker is how many items per worker Ordered lets be in flight.
const windowPerWorker = 16

// Ordered runs work(i) for every i in [0, n) on up to workers goroutines and
// hands each result to emit in index order, from the calling goroutine, so
// that emit needs no locking and output order never depends on scheduling.
// Items start in index order; OrderedBySize starts large ones early.
//
// At most 16×workers items are in flight (started but not yet handed to
// emit), besides the one emit is writing, which bounds memory by the window,
// not by n. The window is that wide so that one
// slow item (a large file) does not stall the other workers after a few items
// while its result blocks the emitter. The first error from work or emit
// cancels the rest and is returned.
func Ordered[R any](ctx context.Context, n, workers int, work func(ctx context.Context, i int) (R, error), emit func(i int, r R) error) error {
	return OrderedBySize(ctx, n, workers, nil, work, emit)
}

// OrderedBySize is Ordered, but among the next items in index order (as
// many as the window holds) each free worker takes the one of largest size
// (the lowest index among equals), so that a large file starts while the
// other workers still have smaller ones to go on with, not last with the
// rest idle behind it: on the real corpus one file takes 15 % of the CPU
// time, and started in turn it left the second of two workers idle for a
// window's worth of items. Results are still emitted in index order and at
// most the window's items are in flight. A nil size is Ordered.
func OrderedBySize[R any](ctx context.Context, n, workers int, size func(i int) int64, work func(ctx context.Context, i int) (R, error), emit func(i int, r R) error) error {
	if workers < 1 {
		workers = 1
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	g, gctx := errgroup.WithContext(ctx)

	window := windowPerWorker * workers
	slots := make(chan struct{}, window)
	results := make(chan orderedItem[R], window)
	p := newPicker(n, window, size)

	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		g.Go(func() error {
			defer wg.Done()
			return runJobs(gctx, p, slots, results, work)
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

// picker hands out the items to start.
//
// It never deadlocks the window: it picks among the look items from the
// lowest one not started, and look is at most the window, so at most
// look-1 items above that one are started before it; once every item below
// it is emitted, a slot is free for it. Only those look items can be
// started out of order, so a ring of look flags records them (n may be
// huge: gen runs until its callback says enough).
type picker struct {
	mu   sync.Mutex
	n    int
	low  int    // every item below low is started
	ring []bool // ring[i%len(ring)]: item i in [low, low+len(ring)) is started
	size func(i int) int64
}

func newPicker(n, look int, size func(i int) int64) *picker {
	return &picker{n: n, ring: make([]bool, max(look, 1)), size: size}
}

// next is the item to start, or false when every item is started.
func (p *picker) next() (int, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	look := len(p.ring)
	for p.low < p.n && p.ring[p.low%look] {
		p.ring[p.low%look] = false // the slot is now item low+look's
		p.low++
	}
	if p.low >= p.n {
		return 0, false
	}
	pick := p.low
	if p.size != nil {
		best := p.size(pick)
		for i := p.low + 1; i < p.n && i < p.low+look; i++ {
			if !p.ring[i%look] {
				if s := p.size(i); s > best {
					pick, best = i, s
				}
			}
		}
	}
	p.ring[pick%look] = true
	return pick, true
}

// orderedItem is the result of item i.
type orderedItem[R any] struct {
	i int
	r R
}

// runJobs takes a slot of the window, starts the item picker gives, and
// sends its result on, until every item is started; it returns work's first
// error, or nil when ctx is done.
func runJobs[R any](ctx context.Context, p *picker, slots chan<- struct{}, results chan<- orderedItem[R], work func(ctx context.Context, i int) (R, error)) error {
	for {
		select {
		case slots <- struct{}{}:
		case <-ctx.Done():
			return nil
		}
		i, ok := p.next()
		if !ok {
			return nil // the slot stays taken: nothing is left to start
		}
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
			// The slot is freed before emit, not after: emitting a large
			// file's rows takes long enough (10-20 ms on the real corpus)
			// that workers waiting for a slot meanwhile left a core idle.
			// The item being emitted is then held besides the window's.
			<-slots
			if err := emit(next, r); err != nil {
				emitErr = err
				cancel()
				break
			}
			next++
		}
	}
	return emitErr
}
