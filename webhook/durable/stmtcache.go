package durable

import (
	"container/list"
	"context"
	"database/sql/driver"
	"errors"
	"reflect"
	"sync/atomic"
)

// database/sql over modernc.org/sqlite prepares every statement anew:
// the driver's connection runs ExecContext and QueryContext by parsing
// the text, and nothing keeps the result. Parsing and planning was a
// quarter of the CPU of a delivery (docs/performance.md), for a dozen
// statements whose text never changes, River's included. cachingConnector
// keeps each connection's prepared statements for the connection's life,
// by text, so a statement is parsed once per connection.

// stmtCacheSize bounds the statements a connection keeps: the queue,
// facts and River run a few dozen texts; more are one-off (migrations).
const stmtCacheSize = 128

// sqlStats counts what a database's connections did, for tests and for
// the reasons in docs/performance.md.
type sqlStats struct {
	prepares atomic.Int64 // statements parsed (cache misses)
	commits  atomic.Int64 // transactions committed
}

// cachingConnector opens connections of inner that keep their prepared
// statements.
type cachingConnector struct {
	inner driver.Connector
	stats *sqlStats
}

func (c *cachingConnector) Connect(ctx context.Context) (driver.Conn, error) {
	conn, err := c.inner.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return &cachingConn{inner: conn, stats: c.stats, byText: map[string]*list.Element{}, lru: list.New()}, nil
}

func (c *cachingConnector) Driver() driver.Driver { return c.inner.Driver() }

// cachingConn is one connection with its statements. database/sql uses a
// connection from one goroutine at a time, so it needs no lock; a
// statement whose rows are still open is busy, and a second use of its
// text meanwhile gets a statement of its own.
type cachingConn struct {
	inner  driver.Conn
	stats  *sqlStats
	byText map[string]*list.Element // of *cachedStmt, most recent first in lru
	lru    *list.List
}

type cachedStmt struct {
	text string
	st   driver.Stmt
	busy bool // rows of it are open
}

var (
	_ driver.ExecerContext      = (*cachingConn)(nil)
	_ driver.QueryerContext     = (*cachingConn)(nil)
	_ driver.ConnBeginTx        = (*cachingConn)(nil)
	_ driver.ConnPrepareContext = (*cachingConn)(nil)
	_ driver.SessionResetter    = (*cachingConn)(nil)
	_ driver.Validator          = (*cachingConn)(nil)
	_ driver.Pinger             = (*cachingConn)(nil)
)

// stmt is the kept statement of text, or one of its own (kept false)
// when the kept one is busy.
func (c *cachingConn) stmt(ctx context.Context, text string) (cs *cachedStmt, kept bool, err error) {
	if e, ok := c.byText[text]; ok {
		cs = e.Value.(*cachedStmt)
		if !cs.busy {
			c.lru.MoveToFront(e)
			return cs, true, nil
		}
	}
	st, err := c.inner.(driver.ConnPrepareContext).PrepareContext(ctx, text)
	if err != nil {
		return nil, false, err
	}
	c.stats.prepares.Add(1)
	fresh := &cachedStmt{text: text, st: st}
	if cs != nil {
		return fresh, false, nil
	}
	c.byText[text] = c.lru.PushFront(fresh)
	for c.lru.Len() > stmtCacheSize {
		e := c.lru.Back()
		old := e.Value.(*cachedStmt)
		if old.busy {
			break // closed when its rows are, see cachedRows.Close
		}
		c.lru.Remove(e)
		delete(c.byText, old.text)
		old.st.Close()
	}
	return fresh, true, nil
}

func (c *cachingConn) ExecContext(ctx context.Context, text string, args []driver.NamedValue) (driver.Result, error) {
	cs, kept, err := c.stmt(ctx, text)
	if err != nil {
		return nil, err
	}
	if !kept {
		defer cs.st.Close()
	}
	return cs.st.(driver.StmtExecContext).ExecContext(ctx, args)
}

func (c *cachingConn) QueryContext(ctx context.Context, text string, args []driver.NamedValue) (driver.Rows, error) {
	cs, kept, err := c.stmt(ctx, text)
	if err != nil {
		return nil, err
	}
	rows, err := cs.st.(driver.StmtQueryContext).QueryContext(ctx, args)
	if err != nil {
		if !kept {
			cs.st.Close()
		}
		return nil, err
	}
	cs.busy = true
	return &cachedRows{Rows: rows, c: c, cs: cs, kept: kept}, nil
}

// PrepareContext is an explicit prepare (database/sql's Stmt), which
// database/sql keeps and closes itself: not cached.
func (c *cachingConn) PrepareContext(ctx context.Context, text string) (driver.Stmt, error) {
	c.stats.prepares.Add(1)
	return c.inner.(driver.ConnPrepareContext).PrepareContext(ctx, text)
}

func (c *cachingConn) Prepare(text string) (driver.Stmt, error) {
	return c.PrepareContext(context.Background(), text)
}

func (c *cachingConn) BeginTx(ctx context.Context, opts driver.TxOptions) (driver.Tx, error) {
	t, err := c.inner.(driver.ConnBeginTx).BeginTx(ctx, opts)
	if err != nil {
		return nil, err
	}
	return countingTx{t, c.stats}, nil
}

func (c *cachingConn) Begin() (driver.Tx, error) {
	return c.BeginTx(context.Background(), driver.TxOptions{})
}

func (c *cachingConn) Close() error {
	for e := c.lru.Front(); e != nil; e = e.Next() {
		e.Value.(*cachedStmt).st.Close()
	}
	c.lru.Init()
	clear(c.byText)
	return c.inner.Close()
}

func (c *cachingConn) ResetSession(ctx context.Context) error {
	if r, ok := c.inner.(driver.SessionResetter); ok {
		return r.ResetSession(ctx)
	}
	return nil
}

func (c *cachingConn) IsValid() bool {
	if v, ok := c.inner.(driver.Validator); ok {
		return v.IsValid()
	}
	return true
}

func (c *cachingConn) Ping(ctx context.Context) error {
	if p, ok := c.inner.(driver.Pinger); ok {
		return p.Ping(ctx)
	}
	return nil
}

type countingTx struct {
	driver.Tx
	stats *sqlStats
}

func (t countingTx) Commit() error {
	err := t.Tx.Commit()
	if err == nil {
		t.stats.commits.Add(1)
	}
	return err
}

// cachedRows gives its statement back when closed.
type cachedRows struct {
	driver.Rows
	c    *cachingConn
	cs   *cachedStmt
	kept bool
	done bool
}

func (r *cachedRows) Close() error {
	if r.done {
		return nil
	}
	r.done = true
	err := r.Rows.Close()
	r.cs.busy = false
	if !r.kept {
		return errors.Join(err, r.cs.st.Close())
	}
	if e, ok := r.c.byText[r.cs.text]; !ok || e.Value != r.cs {
		// Evicted while busy: no one else holds it.
		return errors.Join(err, r.cs.st.Close())
	}
	return err
}

// The column types database/sql may ask the driver's rows for.

func (r *cachedRows) ColumnTypeScanType(i int) reflect.Type {
	if t, ok := r.Rows.(driver.RowsColumnTypeScanType); ok {
		return t.ColumnTypeScanType(i)
	}
	return reflect.TypeFor[any]()
}

func (r *cachedRows) ColumnTypeDatabaseTypeName(i int) string {
	if t, ok := r.Rows.(driver.RowsColumnTypeDatabaseTypeName); ok {
		return t.ColumnTypeDatabaseTypeName(i)
	}
	return ""
}

func (r *cachedRows) ColumnTypeNullable(i int) (nullable, ok bool) {
	if t, ok := r.Rows.(driver.RowsColumnTypeNullable); ok {
		return t.ColumnTypeNullable(i)
	}
	return false, false
}
