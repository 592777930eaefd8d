package report

import "github.com/parquet-go/parquet-go"

// The Parquet writer cuts what one Write call gives it into chunks of at
// most 64 rows, counted from the start of the call and cut again where a
// row group fills (every rowGroupRows rows), and closes a page after a chunk
// when the column's buffer has reached the page size: the file's bytes
// depend on where the calls begin and end. The tables used to gather rows
// in a slice and hand it over once it held batchRows or more (and the rest
// at Close); chunker makes the same calls chunk by chunk as rows arrive, so
// the files are the same bytes while at most one chunk of rows is copied and
// held, not a batch of thousands.
const (
	// batchRows is the batch size the chunk boundaries are counted from.
	batchRows = 4096
	// chunkRows is the Parquet writer's chunk of one call (its
	// maxRowsPerWrite).
	chunkRows = 64
)

// chunker feeds a Parquet writer chunk by chunk.
type chunker[T any] struct {
	w *parquet.GenericWriter[T]
	// pos is the number of rows taken; batch the row at which the current
	// batch began; start the row at which the current chunk began (the
	// chunk's rows before pos are in part).
	pos, batch, start int64
	part              []T
}

// end is the row at which the chunk beginning at row s ends when the batch
// goes on past it: 64 rows on, or the end of the row group if sooner.
func chunkEnd(s int64) int64 {
	return min(s+chunkRows, (s/rowGroupRows+1)*rowGroupRows)
}

// write takes rows; the batch ends with them when it then holds batchRows
// rows or more.
func (c *chunker[T]) write(rows []T) error {
	endsBatch := c.pos+int64(len(rows))-c.batch >= batchRows
	for len(rows) > 0 {
		need := int(chunkEnd(c.start) - c.pos)
		if len(rows) < need && !endsBatch {
			c.part = append(c.part, rows...)
			c.pos += int64(len(rows))
			return nil
		}
		n := min(need, len(rows))
		if err := c.flush(rows[:n]); err != nil {
			return err
		}
		rows = rows[n:]
	}
	if endsBatch {
		c.batch = c.pos
	}
	return nil
}

// flush writes the current chunk: its rows in part, then rows.
func (c *chunker[T]) flush(rows []T) error {
	chunk := rows
	if len(c.part) > 0 {
		c.part = append(c.part, rows...)
		chunk = c.part
	}
	if len(chunk) > 0 {
		if _, err := c.w.Write(chunk); err != nil {
			return err
		}
	}
	c.pos += int64(len(rows))
	c.start = c.pos
	clear(c.part)
	c.part = c.part[:0]
	return nil
}

// close writes the rows still held (the last batch's last chunk).
func (c *chunker[T]) close() error {
	return c.flush(nil)
}
