package durable

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"modernc.org/sqlite"
)

// SchemaVersion is the version of catalogbot's own tables this build
// writes. River's tables have versions of their own, migrated by River.
const SchemaVersion = 1

// FileName is the SQLite file under the state directory.
const FileName = "catalogbot.db"

// db is what the queue and the facts need of a database: transactions
// running SQL written once for both engines ($n placeholders, integer
// times, TEXT values), plus the one clause that differs.
type db interface {
	begin(ctx context.Context) (tx, error)
	// forUpdate is the clause that locks the selected row until the
	// transaction ends: PostgreSQL's FOR UPDATE. SQLite needs none, since
	// its transactions begin IMMEDIATE and so run one at a time.
	forUpdate() string
	// clock is the time leases are told by: the database's own clock
	// (PostgreSQL's clock_timestamp()), one for every replica, so that a
	// replica whose clock runs ahead cannot find a live lease lapsed. A
	// SQLite state belongs to one process, whose clock (local) is the one.
	clock(ctx context.Context, t tx, local func() time.Time) (time.Time, error)
	// reader runs single reads outside any transaction, on connections
	// of their own where the engine has them (SQLite's readers beside its
	// one writer), so that a read waits for no writer.
	reader() querier
	close()
}

// querier is what reads need: a transaction, or a database's readers.
type querier interface {
	queryRow(ctx context.Context, q string, args ...any) scanner
	// each calls row for every row q gives, in order, until row fails.
	each(ctx context.Context, q string, row func(scanner) error, args ...any) error
}

type tx interface {
	querier
	exec(ctx context.Context, q string, args ...any) (int64, error)
	commit(ctx context.Context) error
	rollback(ctx context.Context) error
	// raw is the engine's own transaction (*sql.Tx or pgx.Tx), which
	// River's calls take.
	raw() any
}

type scanner interface{ Scan(dest ...any) error }

// errNoRows is what a scanner returns for no row, whatever the engine.
func errNoRows(err error) bool { return errors.Is(err, sql.ErrNoRows) || errors.Is(err, pgx.ErrNoRows) }

// sqliteDB is database/sql over modernc.org/sqlite: one connection
// that writes (SQLite writes one at a time) and a few that only read,
// which WAL lets run beside the writer.
type sqliteDB struct {
	pool  *sql.DB // the writer
	read  *sql.DB
	lock  *os.File
	stats sqlStats // of both pools
}

func (d *sqliteDB) reader() querier { return sqlQuerier{d.read} }

// sqlQuerier reads through a database/sql pool, a statement at a time.
type sqlQuerier struct{ db *sql.DB }

func (r sqlQuerier) queryRow(ctx context.Context, q string, args ...any) scanner {
	return r.db.QueryRowContext(ctx, q, args...)
}

func (r sqlQuerier) each(ctx context.Context, q string, row func(scanner) error, args ...any) error {
	rows, err := r.db.QueryContext(ctx, q, args...)
	if err != nil {
		return err
	}
	return eachRow(rows, row)
}

// eachRow calls row for each of rows, and closes them.
func eachRow(rows *sql.Rows, row func(scanner) error) error {
	defer rows.Close()
	for rows.Next() {
		if err := row(rows); err != nil {
			return err
		}
	}
	return rows.Err()
}

func (d *sqliteDB) forUpdate() string { return "" }

func (d *sqliteDB) clock(_ context.Context, _ tx, local func() time.Time) (time.Time, error) {
	return local(), nil
}

func (d *sqliteDB) close() {
	d.read.Close()
	d.pool.Close()
	if d.lock != nil {
		d.lock.Close() // releases the flock
	}
}

func (d *sqliteDB) begin(ctx context.Context) (tx, error) {
	t, err := d.pool.BeginTx(ctx, nil)
	if err != nil {
		return nil, err
	}
	return sqlTx{t}, nil
}

type sqlTx struct{ t *sql.Tx }

func (t sqlTx) exec(ctx context.Context, q string, args ...any) (int64, error) {
	r, err := t.t.ExecContext(ctx, q, args...)
	if err != nil {
		return 0, err
	}
	return r.RowsAffected()
}

func (t sqlTx) queryRow(ctx context.Context, q string, args ...any) scanner {
	return t.t.QueryRowContext(ctx, q, args...)
}
func (t sqlTx) each(ctx context.Context, q string, row func(scanner) error, args ...any) error {
	rows, err := t.t.QueryContext(ctx, q, args...)
	if err != nil {
		return err
	}
	return eachRow(rows, row)
}
func (t sqlTx) commit(context.Context) error   { return t.t.Commit() }
func (t sqlTx) rollback(context.Context) error { return t.t.Rollback() }
func (t sqlTx) raw() any                       { return t.t }

// openSQLite opens (creating) the state file under dir, after taking an
// exclusive lock beside it: one process owns a SQLite state, so what a
// dead owner left running can be taken back at once (see Queue.Start).
func openSQLite(dir string) (*sqliteDB, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("state directory: %w", err)
	}
	path := filepath.Join(dir, FileName)
	lock, err := os.OpenFile(path+".lock", os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return nil, fmt.Errorf("state directory: %w", err)
	}
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		lock.Close()
		return nil, fmt.Errorf("state %s is in use by another catalogbot serve (%v); several replicas need a PostgreSQL database", path, err)
	}
	if err := checkStateFile(path); err != nil {
		lock.Close()
		return nil, err
	}
	// WAL lets readers go on beside the writer; IMMEDIATE transactions
	// take the write lock at BEGIN, so that two never both read and then
	// both write; the busy timeout waits out River's own writers.
	dsn := "file:" + path + "?_pragma=journal_mode(WAL)&_pragma=busy_timeout(10000)&_pragma=synchronous(NORMAL)&_txlock=immediate"
	d := &sqliteDB{lock: lock}
	writer, err := sqlite.NewConnector(dsn)
	if err != nil {
		lock.Close()
		return nil, fmt.Errorf("state %s: %w", path, err)
	}
	d.pool = sql.OpenDB(&cachingConnector{inner: writer, stats: &d.stats})
	// SQLite writes one at a time; one connection keeps River's
	// maintenance and the intake from failing with SQLITE_BUSY.
	d.pool.SetMaxOpenConns(1)
	// The readers cannot write (query_only), and begin no write
	// transaction; in WAL mode each reads the last commit.
	reader, err := sqlite.NewConnector("file:" + path + "?_pragma=busy_timeout(10000)&_pragma=query_only(1)")
	if err != nil {
		d.pool.Close()
		lock.Close()
		return nil, fmt.Errorf("state %s: %w", path, err)
	}
	d.read = sql.OpenDB(&cachingConnector{inner: reader, stats: &d.stats})
	d.read.SetMaxOpenConns(sqliteReaders)
	d.read.SetMaxIdleConns(sqliteReaders)
	// The writer first: it makes the file and sets the journal mode the
	// readers then find.
	for _, p := range []*sql.DB{d.pool, d.read} {
		if err := p.Ping(); err != nil {
			d.close()
			return nil, fmt.Errorf("state %s: %w", path, err)
		}
	}
	return d, nil
}

// sqliteReaders is how many connections of a SQLite state read at once:
// the intake's duplicate checks, the queue depth and the App's facts.
const sqliteReaders = 4

// sqliteMagic begins every SQLite database file.
const sqliteMagic = "SQLite format 3\x00"

// checkStateFile refuses a state file that is there but is no SQLite
// database: SQLite would take a zero-length file for a new, empty
// database and start without the queue and facts the file should hold
// (a disk that filled, a copy that went wrong), and another file it would
// refuse only at the first query, with a message that names no file. A
// zero-length file beside a write-ahead log that holds data is a state
// never checkpointed, and is SQLite's to read.
func checkStateFile(path string) error {
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("state %s: %w", path, err)
	}
	defer f.Close()
	head := make([]byte, len(sqliteMagic))
	n, err := io.ReadFull(f, head)
	switch {
	case n == 0 && (err == io.EOF):
		if wal, err := os.Stat(path + "-wal"); err == nil && wal.Size() > 0 {
			return nil
		}
		return fmt.Errorf("state %s is empty (0 bytes), not a state catalogbot wrote; move it away to start with an empty state, or restore it", path)
	case err != nil && err != io.ErrUnexpectedEOF:
		return fmt.Errorf("state %s: %w", path, err)
	case string(head[:n]) != sqliteMagic:
		return fmt.Errorf("state %s is not a SQLite database (it begins %q); move it away to start with an empty state, or restore it", path, head[:n])
	}
	return nil
}

// pgDB is a pgx pool.
type pgDB struct{ pool *pgxpool.Pool }

func (d *pgDB) reader() querier { return pgQuerier{d.pool} }

// pgQuerier reads through the pool, each statement its own transaction:
// one round trip, where BEGIN and COMMIT around it would make three.
type pgQuerier struct{ pool *pgxpool.Pool }

func (r pgQuerier) queryRow(ctx context.Context, q string, args ...any) scanner {
	return r.pool.QueryRow(ctx, q, args...)
}

func (r pgQuerier) each(ctx context.Context, q string, row func(scanner) error, args ...any) error {
	rows, err := r.pool.Query(ctx, q, args...)
	if err != nil {
		return err
	}
	return eachPgRow(rows, row)
}

func eachPgRow(rows pgx.Rows, row func(scanner) error) error {
	defer rows.Close()
	for rows.Next() {
		if err := row(rows); err != nil {
			return err
		}
	}
	return rows.Err()
}

func (d *pgDB) forUpdate() string { return " FOR UPDATE" }

func (d *pgDB) clock(ctx context.Context, t tx, _ func() time.Time) (time.Time, error) {
	var us int64
	if err := t.queryRow(ctx, `SELECT (EXTRACT(EPOCH FROM clock_timestamp()) * 1000000)::bigint`).Scan(&us); err != nil {
		return time.Time{}, fmt.Errorf("state: reading the database's clock: %w", err)
	}
	return time.UnixMicro(us), nil
}
func (d *pgDB) close() { d.pool.Close() }

func (d *pgDB) begin(ctx context.Context) (tx, error) {
	t, err := d.pool.Begin(ctx)
	if err != nil {
		return nil, err
	}
	return pgTx{t}, nil
}

type pgTx struct{ t pgx.Tx }

func (t pgTx) exec(ctx context.Context, q string, args ...any) (int64, error) {
	tag, err := t.t.Exec(ctx, q, args...)
	return tag.RowsAffected(), err
}
func (t pgTx) queryRow(ctx context.Context, q string, args ...any) scanner {
	return t.t.QueryRow(ctx, q, args...)
}
func (t pgTx) each(ctx context.Context, q string, row func(scanner) error, args ...any) error {
	rows, err := t.t.Query(ctx, q, args...)
	if err != nil {
		return err
	}
	return eachPgRow(rows, row)
}
func (t pgTx) commit(ctx context.Context) error   { return t.t.Commit(ctx) }
func (t pgTx) rollback(ctx context.Context) error { return t.t.Rollback(ctx) }
func (t pgTx) raw() any                           { return t.t }

func openPostgres(ctx context.Context, url string) (*pgDB, error) {
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		// pgx's message may quote the URL, password included.
		return nil, errors.New("database: not a PostgreSQL URL (postgres://user@host:port/db)")
	}
	// The pool stays at pgx's default (the CPUs, at least 4), or the
	// URL's pool_max_conns: the intake shares one transaction among the
	// deliveries that arrive together (see batcher), so it needs no more,
	// and under CPU load more connections made the server slower, not
	// faster (docs/performance.md).
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("database %s: %w", cfg.ConnConfig.Host, err)
	}
	if err := pool.Ping(ctx); err != nil {
		pool.Close()
		return nil, fmt.Errorf("database %s:%d: %w", cfg.ConnConfig.Host, cfg.ConnConfig.Port, err)
	}
	return &pgDB{pool: pool}, nil
}

// inTx runs f in a transaction of d, committing when it returns nil.
func inTx(ctx context.Context, d db, f func(tx) error) error {
	t, err := d.begin(ctx)
	if err != nil {
		return err
	}
	if err := f(t); err != nil {
		t.rollback(context.WithoutCancel(ctx))
		return err
	}
	return t.commit(ctx)
}

// schema is catalogbot's own tables, version 1. Times are Unix
// nanoseconds, values TEXT, so one text serves both engines.
var schema = []string{
	`CREATE TABLE IF NOT EXISTS catalogbot_meta (name TEXT PRIMARY KEY, value TEXT NOT NULL)`,
	// One row per key with work: its newest job (NULL once taken), when
	// that job is due, the job a worker runs, the epoch of the key's River
	// job, and the key's lease.
	`CREATE TABLE IF NOT EXISTS catalogbot_key (
		key TEXT PRIMARY KEY,
		job TEXT,
		due BIGINT NOT NULL DEFAULT 0,
		received BIGINT NOT NULL DEFAULT 0,
		running TEXT,
		epoch BIGINT NOT NULL DEFAULT 0,
		river_id BIGINT NOT NULL DEFAULT 0,
		owner TEXT NOT NULL DEFAULT '',
		lease_until BIGINT NOT NULL DEFAULT 0
	)`,
	// What deliveries told: delivery ids, replay keys, and the App's
	// facts, each under a namespace, with the time it was last written
	// (for expiry).
	`CREATE TABLE IF NOT EXISTS catalogbot_fact (
		ns TEXT NOT NULL,
		key TEXT NOT NULL,
		value TEXT NOT NULL,
		at BIGINT NOT NULL,
		PRIMARY KEY (ns, key)
	)`,
	`CREATE INDEX IF NOT EXISTS catalogbot_fact_at ON catalogbot_fact (ns, at)`,
}

// sqliteIndexes are the indexes added to version 1 of a SQLite state
// since it was first written. An index changes what no query means, so a
// build that lacks one runs on a state that has it: they are made at
// every start, not under a new version an older build would refuse.
var sqliteIndexes = []string{
	// The keys with work: the bound on queued keys counts them, and
	// reapFetched reads the oldest due. SQLite keeps a job (the whole
	// delivery body) in its row, so counting by the table reads a page per
	// key; by this index, a few pages. PostgreSQL moves a large job out of
	// the row (TOAST), so its rows are small and a count of them cheap,
	// while the index there would cost every update of a key's due or job
	// its in-place (HOT) update.
	`CREATE INDEX IF NOT EXISTS catalogbot_key_pending ON catalogbot_key (due, key) WHERE job IS NOT NULL`,
}

// migrate creates catalogbot's tables in a fresh state, or upgrades them,
// and refuses a state a newer version wrote. River's tables are migrated
// by River (see Open).
func migrate(ctx context.Context, d db, indexes []string) error {
	return inTx(ctx, d, func(t tx) error {
		if _, err := t.exec(ctx, schema[0]); err != nil {
			return fmt.Errorf("state schema: %w", err)
		}
		var v string
		err := t.queryRow(ctx, `SELECT value FROM catalogbot_meta WHERE name = 'schema_version'`).Scan(&v)
		have := 0
		switch {
		case errNoRows(err):
		case err != nil:
			return fmt.Errorf("state schema: %w", err)
		default:
			if have, err = strconv.Atoi(v); err != nil {
				return fmt.Errorf("state schema: version %q is not a number", v)
			}
		}
		if have > SchemaVersion {
			return fmt.Errorf("state schema version %d was written by a newer catalogbot (this one knows up to %d); upgrade catalogbot or start from a fresh state", have, SchemaVersion)
		}
		if have == SchemaVersion {
			return ensureIndexes(ctx, t, indexes)
		}
		// Version 1 is the first; later versions add their steps here,
		// each from the version before.
		for _, q := range schema[1:] {
			if _, err := t.exec(ctx, q); err != nil {
				return fmt.Errorf("state schema: %w", err)
			}
		}
		if err := ensureIndexes(ctx, t, indexes); err != nil {
			return err
		}
		_, err = t.exec(ctx, `INSERT INTO catalogbot_meta (name, value) VALUES ('schema_version', $1)
			ON CONFLICT (name) DO UPDATE SET value = excluded.value`, strconv.Itoa(SchemaVersion))
		return err
	})
}

func ensureIndexes(ctx context.Context, t tx, indexes []string) error {
	for _, q := range indexes {
		if _, err := t.exec(ctx, q); err != nil {
			return fmt.Errorf("state schema: %w", err)
		}
	}
	return nil
}
