//! COPY FROM: records to tuples to heap pages.
//!
//! Records are read in place from a 1 MiB input buffer
//! ([`RecordReader`]). A text-format record of a COPY that names every
//! column in order goes through the fast path (`record_to_tuple`):
//! integers parsed into their slots, strings copied behind their varlena
//! header, in one pass; any other record (escapes, NULLs, CSV, column
//! lists, defaults, anything the fast path declines) is split into fields
//! and converted by each column's input function ([`Parser::general`]),
//! which also raises PostgreSQL's errors. The tuples are packed into whole
//! heap pages off the buffer pool ([`PageImages`]), and each page goes onto
//! a new block through the bulk-write ring and is logged as one full-page
//! image (LZ4-compressed with `wal_compression`: ~900 bytes for a page of
//! pgbench accounts). A server-side file in text format is loaded by three
//! threads that each read, parse, compress and place their own 2 MiB
//! chunks, in file order (`parallel`); other input is parsed on the
//! caller's thread while an inserter thread puts the pages into the
//! relation in order
//! ([`HeapRelation::insert_page_images`](crate::access::heap::HeapRelation::insert_page_images))
//! and hands the emptied buffers back. So a load larger than
//! `shared_buffers` does not evict the rest of the cache and writes about a
//! ninth of the log a tuple-by-tuple record would. Space the table already
//! has (a VACUUM freed it, an earlier load left the last page part full) is
//! filled first, tuple by tuple. The first bad record stops the COPY with
//! PostgreSQL's message and a CONTEXT line (`COPY t, line 12, column a:
//! "x"`); the statement's transaction then aborts, so none of its rows is
//! visible.
//!
//! COPY was designed to fill pages through multi-insert: it still does for
//! the free space of existing pages, but new pages are built whole and
//! logged as images (PostgreSQL's `log_newpage`) because per-tuple
//! multi-insert records cost the load most of its time here (copying each
//! tuple into a record, applying it, encoding it, and writing ~105 bytes of
//! log per row), where an image is one copy and compresses well.
//!
//! `FREEZE` (checked by the caller: the table must be created or truncated
//! in the current transaction) writes the rows frozen and the pages they
//! fill all-visible and all-frozen in the visibility map, with their live
//! counts (`HeapRelation::multi_insert_frozen`): `count(*)` right after the
//! COPY reads only the map, and no VACUUM is needed after COMMIT. Until the
//! commit no other session can see them: the table's file is new in this
//! transaction, and other sessions read the catalog under their snapshots
//! (a REPEATABLE READ transaction whose snapshot predates the commit gets
//! "relation does not exist" for a created table, and a serialization
//! failure for a truncated one, where PostgreSQL would show it the frozen
//! rows: its documented exception to MVCC that heapdb does not make). If
//! the transaction aborts, or the system crashes before its commit, the
//! file is dropped with every row in it.
//!
//! What the load needs from its caller is explicit: the statement
//! ([`CopyContext`]) and the table ([`LoadTarget`]: looked up and locked,
//! its relation, the columns named, and how to evaluate a column's DEFAULT,
//! which takes the planner). Index entries for the loaded rows are the
//! caller's to make once [`copy_from`] has returned the row count.

mod parallel;
mod record_to_tuple;

use std::io::BufRead;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;

use self::parallel::ParallelLoad;
use self::record_to_tuple::FastForm;
use super::context::open_input;
use super::reader::RecordReader;
use super::{csv, text, CopyContext, CopyOptions, CopyProgress, Field, Format};
use crate::access::heap::{tuple, HeapRelation, PageImages};
use crate::catalog::TableDef;
use crate::err;
use crate::error::{Error, Result};
use crate::exec::scan::tuple_desc;
use crate::storage::page::MAX_ITEM_SIZE;
use crate::storage::{Ring, BLCKSZ};
use crate::types::io::parse_value_at;
use crate::types::{format_value, DataType, Value};

/// Heap pages per batch handed to the inserter (1 MiB).
const BATCH_PAGES: usize = 128;

/// Where COPY FROM reads: a file (opened once the table and columns are
/// known to be right, as PostgreSQL does) or the client's stream.
pub enum Input<'a, 'b> {
    /// A server-side file.
    File(&'a str),
    /// The client's data.
    Client(&'a mut (dyn BufRead + 'b)),
}

/// The table a COPY FROM loads, as its caller resolved it.
pub struct LoadTarget<'a> {
    /// The table, looked up under the statement's snapshot and locked
    /// (ROW EXCLUSIVE).
    pub table: &'a TableDef,
    /// Its heap.
    pub rel: &'a HeapRelation,
    /// The bulk-write ring the new pages go through.
    pub ring: Ring,
    /// The table column of each input field (the COPY's column list, or
    /// every column).
    pub targets: &'a [usize],
    /// The value of a column's DEFAULT expression (its text) converted to
    /// the column's type; called once per column the list leaves out.
    pub default_value: &'a mut dyn FnMut(&str, &DataType) -> Result<Value>,
    /// Per table column, its domain's DEFAULT and check when it has a
    /// domain (empty: no column has one).
    pub domains: &'a [Option<ColumnDomain>],
}

/// A check of one value (a domain's).
pub type CheckFn = std::sync::Arc<dyn Fn(&Value) -> Result<()> + Send + Sync>;

/// A domain column's domain, as COPY FROM applies it: its DEFAULT (for a
/// column left out that has none of its own) and the check every value of
/// the column passes (`plan::domain`).
pub struct ColumnDomain {
    /// The domain's DEFAULT expression text.
    pub default: Option<String>,
    /// Checks one value of the domain's base type.
    pub check: CheckFn,
}

/// What each table column gets: field `k` of the record, or a constant
/// (the column's default, or NULL).
pub(crate) enum Source {
    Field(usize),
    Const(Value),
}

/// The record being loaded, for CONTEXT lines.
struct Where<'a> {
    table: &'a str,
    line: u64,
    record: &'a [u8],
}

impl Where<'_> {
    fn line(&self, e: Error) -> Error {
        e.with_context(format!(
            "COPY {}, line {}: \"{}\"",
            self.table,
            self.line,
            super::limit_display(self.record)
        ))
    }

    fn column(&self, e: Error, col: &str, value: &[u8]) -> Error {
        e.with_context(format!(
            "COPY {}, line {}, column {col}: \"{}\"",
            self.table,
            self.line,
            super::limit_display(value)
        ))
    }
}

/// Loads the records of `input` into `target`; returns the row count.
pub fn copy_from(
    ctx: &mut CopyContext<'_>,
    target: LoadTarget<'_>,
    opts: &CopyOptions,
    input: Input<'_, '_>,
) -> Result<u64> {
    let LoadTarget {
        table,
        rel,
        ring,
        targets,
        default_value,
        domains,
    } = target;
    let (xid, cid, now) = (ctx.xid, ctx.cid, ctx.now);
    rel.set_fillfactor(table.fillfactor());
    let not_null = force_not_null(table, targets, opts)?;
    let mut sources = Vec::with_capacity(table.columns.len());
    for (j, col) in table.columns.iter().enumerate() {
        sources.push(match targets.iter().position(|&t| t == j) {
            Some(k) => Source::Field(k),
            None => {
                let domain_default = domains.get(j).and_then(|d| d.as_ref()?.default.as_ref());
                Source::Const(match col.default.as_ref().or(domain_default) {
                    Some(d) => default_value(d, &col.ty)?,
                    None => Value::Null,
                })
            }
        });
    }
    let desc = tuple_desc(table)?;
    let cancel = ctx.cancel;
    let mut parser = Parser {
        table,
        opts,
        targets,
        not_null: &not_null,
        sources: &sources,
        desc: &desc,
        now,
        domains,
    };
    let freeze = opts.freeze;
    if freeze {
        // Frozen pages are set all-visible as they are loaded, and their
        // summary slots made then (`access::sumfork`): the columns' kinds.
        let types: Vec<_> = table.columns.iter().map(|c| c.ty).collect();
        rel.set_summary_spec(Some(crate::access::sumfork::SummarySpec::of_types(&types)?));
    }
    // A file in text format loads on three threads (`parallel`).
    if let (Input::File(path), Format::Text) = (&input, opts.format) {
        let (file, len) = open_input(path)?;
        let load = ParallelLoad::new(
            &parser,
            rel,
            (xid, cid),
            freeze,
            file.into_inner(),
            ring,
            cancel,
        )?;
        return load.run(&mut |rows, bytes| {
            ctx.report(CopyProgress {
                bytes,
                total_bytes: Some(len),
                rows,
            })
        });
    }
    let mut file;
    let (input, total_bytes): (&mut dyn BufRead, _) = match input {
        Input::File(path) => {
            let (r, len) = open_input(path)?;
            file = r;
            (&mut file, Some(len))
        }
        Input::Client(r) => (r, None),
    };
    // Two stages: this thread parses records and forms tuples into
    // batches; the inserter thread puts each batch on pages (in order)
    // and hands the emptied buffers back. A failed insert ends the
    // inserter, whose receiver then refuses the next batch.
    std::thread::scope(|s| {
        let (full_tx, full_rx) = mpsc::sync_channel::<Batch>(1);
        let (empty_tx, empty_rx) = mpsc::channel::<Batch>();
        let inserter = s.spawn(move || -> Result<()> {
            let mut ring = ring;
            let mut fill_first = true;
            for mut pages in full_rx {
                rel.insert_page_images(
                    &pages,
                    (xid, cid),
                    freeze,
                    Some(&mut ring),
                    &mut fill_first,
                    &[],
                )?;
                pages.clear();
                let _ = empty_tx.send(pages);
            }
            Ok(())
        });
        let mut send = |batch: Batch| full_tx.send(batch).is_ok();
        let parsed = parser.run(
            input,
            PageImages::new(xid, cid, freeze).reserving(rel.fill_reserve()),
            &mut send,
            &empty_rx,
            cancel,
            &mut |rows, bytes| {
                ctx.report(CopyProgress {
                    bytes,
                    total_bytes,
                    rows,
                })
            },
        );
        drop(full_tx);
        let inserted = inserter
            .join()
            .unwrap_or_else(|_| Err(err!(InternalError, "the COPY inserter thread panicked")));
        match (parsed, inserted) {
            (Err(e), _) => Err(e),
            (Ok(_), Err(e)) => Err(e),
            (Ok(rows), Ok(())) => Ok(rows),
        }
    })
}

/// Per input field, whether FORCE_NOT_NULL names its column (checking that
/// every column it names is among the COPY's).
fn force_not_null(table: &TableDef, targets: &[usize], opts: &CopyOptions) -> Result<Vec<bool>> {
    let mut not_null = vec![false; targets.len()];
    for c in &opts.force_not_null {
        match targets.iter().position(|&t| table.columns[t].name == *c) {
            Some(k) => not_null[k] = true,
            None => {
                return Err(err!(
                    InvalidColumnReference,
                    "FORCE_NOT_NULL column \"{c}\" not referenced by COPY"
                ))
            }
        }
    }
    Ok(not_null)
}

/// One batch: whole heap pages built by [`PageImages`], back to back.
type Batch = Vec<u8>;

/// The parsing stage of COPY FROM: records to tuples in batches.
pub(crate) struct Parser<'a> {
    /// The table loaded.
    pub table: &'a TableDef,
    /// The COPY's options.
    pub opts: &'a CopyOptions,
    /// Table column of each input field.
    pub targets: &'a [usize],
    /// Per field, FORCE_NOT_NULL.
    pub not_null: &'a [bool],
    /// What each table column gets.
    pub sources: &'a [Source],
    /// The table's storage description.
    pub desc: &'a tuple::TupleDesc,
    /// The transaction's start time (for `now`-relative input).
    pub now: i64,
    /// Per table column, its domain (empty: none has one); a table with
    /// one never takes the fast path.
    pub domains: &'a [Option<ColumnDomain>],
}

/// The general path's reused buffers: a record's de-escaped bytes, its
/// fields, its encoded values and their ranges.
#[derive(Default)]
pub(crate) struct Scratch {
    buf: Vec<u8>,
    fields: Vec<Field>,
    vals: Vec<u8>,
    ranges: Vec<Option<(usize, usize)>>,
}

impl Parser<'_> {
    /// Reads every record of `input`, handing full batches to `send`
    /// (false: the inserter stopped, with its error), reusing the buffers
    /// that come back on `empty`, and reporting (rows, bytes) after each
    /// batch. Returns the row count.
    fn run(
        &mut self,
        input: &mut dyn BufRead,
        mut images: PageImages,
        send: &mut dyn FnMut(Batch) -> bool,
        empty: &mpsc::Receiver<Batch>,
        cancel: &AtomicBool,
        progress: &mut dyn FnMut(u64, u64),
    ) -> Result<u64> {
        let opts = self.opts;
        let mut reader = RecordReader::new(input, opts);
        let mut fast = FastForm::new(self.table, opts, self.targets, self.desc, self.now);
        let mut scratch = Scratch::default();
        // One tuple, formed here and then added to the page being filled.
        let mut tup = Vec::with_capacity(256);
        let mut rows = 0u64;
        let mut line = 0u64;
        loop {
            let record = match reader.next() {
                Ok(Some(r)) => r,
                Ok(None) => break,
                Err(e) => {
                    let at = Where {
                        table: &self.table.name,
                        line: line + 1,
                        record: reader.partial(),
                    };
                    return Err(at.line(e));
                }
            };
            line += 1;
            if line == 1 && opts.header {
                continue;
            }
            if record == b"\\." {
                break;
            }
            tup.clear();
            if fast
                .as_mut()
                .and_then(|f| f.form(record, &mut tup))
                .is_none()
            {
                self.general(record, line, &mut scratch, &mut tup)?;
            }
            images.push(&tup)?;
            rows += 1;
            if images.full_pages() >= BATCH_PAGES {
                if cancel.load(Ordering::Relaxed) {
                    return Err(err!(
                        QueryCanceled,
                        "canceling statement due to user request"
                    ));
                }
                let spare = empty
                    .try_recv()
                    .unwrap_or_else(|_| Vec::with_capacity((BATCH_PAGES + 1) * BLCKSZ));
                if !send(images.take_full(spare)) {
                    // The inserter failed; the caller reports its error.
                    return Ok(rows);
                }
                progress(rows, reader.bytes());
            }
        }
        send(images.take_all());
        progress(rows, reader.bytes());
        Ok(rows)
    }

    /// The general path: splits `record` (line `line`) into fields,
    /// converts each with its column's input function, and appends the
    /// tuple to `data`; returns its length. Errors carry the CONTEXT line.
    pub(super) fn general(
        &self,
        record: &[u8],
        line: u64,
        scratch: &mut Scratch,
        data: &mut Vec<u8>,
    ) -> Result<usize> {
        let (table, opts, targets, sources) = (self.table, self.opts, self.targets, self.sources);
        let Scratch {
            buf,
            fields,
            vals,
            ranges,
        } = scratch;
        let here = Where {
            table: &table.name,
            line,
            record,
        };
        // A text line without backslashes is split in place and checked as
        // UTF-8 once; other lines are de-escaped into `buf` and their fields
        // checked one by one. An ASCII line without NUL bytes needs no UTF-8
        // check at all, and its characters are its bytes.
        let plain = opts.format == Format::Text && text::is_plain(record);
        let ascii = plain && record.is_ascii() && !record.contains(&0);
        let (src, src_str): (&[u8], Option<&str>) = if ascii {
            text::split_plain(record, opts, fields);
            (record, None)
        } else if plain {
            text::split_plain(record, opts, fields);
            let s = super::field_str(record).map_err(|e| here.line(e))?;
            (record, Some(s))
        } else {
            match opts.format {
                Format::Text => text::split(record, opts, buf, fields),
                Format::Csv => csv::split(record, opts, self.not_null, buf, fields),
            }
            (buf, None)
        };
        if fields.len() > targets.len() {
            return Err(here.line(err!(
                BadCopyFileFormat,
                "extra data after last expected column"
            )));
        }
        if fields.len() < targets.len() {
            return Err(here.line(err!(
                BadCopyFileFormat,
                "missing data for column \"{}\"",
                table.columns[targets[fields.len()]].name
            )));
        }
        vals.clear();
        ranges.clear();
        for (j, col) in table.columns.iter().enumerate() {
            let range = match &sources[j] {
                Source::Const(v) if v.is_null() => None,
                Source::Const(v) => {
                    let s = vals.len();
                    v.encode(vals);
                    Some((s, vals.len()))
                }
                Source::Field(k) => match fields[*k] {
                    None => None,
                    Some((s, e)) => {
                        let raw = &src[s..e];
                        let start = vals.len();
                        // (A table with a domain column checks each
                        // value below, so it skips this shortcut.)
                        if self.domains.is_empty() && encode_int(raw, &col.ty, vals) {
                            ranges.push(Some((start, vals.len())));
                            continue;
                        }
                        let text = match src_str.and_then(|st| st.get(s..e)) {
                            Some(t) => t,
                            None if ascii && col.ty.is_string() => "",
                            None => super::field_str(raw).map_err(|e| here.line(e))?,
                        };
                        match col.ty {
                            DataType::Text | DataType::Varchar(None) => vals.extend_from_slice(raw),
                            // At most n bytes is at most n characters: no
                            // length error possible, no allocation.
                            DataType::Varchar(Some(n)) if raw.len() <= n as usize => {
                                vals.extend_from_slice(raw)
                            }
                            DataType::Char(n) if raw.len() <= n as usize => {
                                let chars = if ascii {
                                    raw.len()
                                } else {
                                    text.chars().count()
                                };
                                vals.extend_from_slice(raw);
                                vals.resize(vals.len() + n as usize - chars, b' ');
                            }
                            _ if ascii && col.ty.is_string() => {
                                let text = super::field_str(raw).map_err(|e| here.line(e))?;
                                parse_value_at(text, &col.ty, self.now)
                                    .map_err(|e| here.column(e, &col.name, raw))?
                                    .encode(vals)
                            }
                            _ => parse_value_at(text, &col.ty, self.now)
                                .map_err(|e| here.column(e, &col.name, raw))?
                                .encode(vals),
                        }
                        Some((start, vals.len()))
                    }
                },
            };
            if range.is_none() && col.not_null {
                return Err(here.line(not_null_error(table, j, sources, fields, src)));
            }
            if let Some(Some(d)) = self.domains.get(j) {
                let v = range.map_or(Value::Null, |(s, e)| Value::decode(&col.ty, &vals[s..e]));
                (d.check)(&v).map_err(|e| match &sources[j] {
                    Source::Field(k) => match fields[*k] {
                        Some((s, e2)) => here.column(e, &col.name, &src[s..e2]),
                        None => e.with_context(format!(
                            "COPY {}, line {}, column {}: null input",
                            here.table, here.line, col.name
                        )),
                    },
                    Source::Const(_) => here.line(e),
                })?;
            }
            ranges.push(range);
        }
        if !table.checks.is_empty() {
            check_row(table, vals, ranges).map_err(|e| here.line(e))?;
        }
        let n = tuple::form_tuple_append_ranges(self.desc, vals, ranges, data)?;
        if n > MAX_ITEM_SIZE {
            data.truncate(data.len() - n);
            return Err(here.line(err!(
                ProgramLimitExceeded,
                "row is too big: size {n}, maximum size {MAX_ITEM_SIZE}"
            )));
        }
        Ok(n)
    }
}

/// Fails with PostgreSQL's 23514 when a CHECK constraint of `table` is
/// false for the row whose encoded values are `vals` at `ranges` (the
/// first such check by name; NULL passes).
fn check_row(table: &TableDef, vals: &[u8], ranges: &[Option<(usize, usize)>]) -> Result<()> {
    let row: Vec<Value> = table
        .columns
        .iter()
        .zip(ranges)
        .map(|(c, r)| r.map_or(Value::Null, |(s, e)| Value::decode(&c.ty, &vals[s..e])))
        .collect();
    let columns = table
        .columns
        .iter()
        .zip(&row)
        .map(|(c, v)| crate::exec::vector::Vector::from_values(c.ty, std::slice::from_ref(v)))
        .collect();
    let batch = crate::exec::vector::Batch::new(columns);
    for c in &table.checks {
        if matches!(c.expr.eval(&batch)?.get(0), Value::Bool(false)) {
            let shown: Vec<String> = row.iter().map(crate::exec::modify::shown_value).collect();
            return Err(crate::exec::modify::check_violation_shown(
                table, &c.name, &shown,
            ));
        }
    }
    Ok(())
}

/// Encodes a plain decimal integer field (`-?[0-9]{1,18}`, in range) of an
/// integer column straight into `out`, as `Value::encode` would; false for
/// anything else (another type, spaces, `+`, too long, out of range), which
/// the general parser then handles with PostgreSQL's errors.
fn encode_int(raw: &[u8], ty: &DataType, out: &mut Vec<u8>) -> bool {
    if !matches!(ty, DataType::Int2 | DataType::Int4 | DataType::Int8) {
        return false;
    }
    let (neg, digits) = match raw.split_first() {
        Some((b'-', rest)) => (true, rest),
        _ => (false, raw),
    };
    if digits.is_empty() || digits.len() > 18 {
        return false;
    }
    let mut v: i64 = 0;
    for &d in digits {
        if !d.is_ascii_digit() {
            return false;
        }
        v = v * 10 + i64::from(d - b'0');
    }
    if neg {
        v = -v;
    }
    match ty {
        DataType::Int2 => match i16::try_from(v) {
            Ok(x) => out.extend_from_slice(&x.to_le_bytes()),
            Err(_) => return false,
        },
        DataType::Int4 => match i32::try_from(v) {
            Ok(x) => out.extend_from_slice(&x.to_le_bytes()),
            Err(_) => return false,
        },
        _ => out.extend_from_slice(&v.to_le_bytes()),
    }
    true
}

/// PostgreSQL's not-null violation for column `j`, with the failing row
/// (the same message as INSERT's).
fn not_null_error(
    table: &TableDef,
    j: usize,
    sources: &[Source],
    fields: &[Field],
    buf: &[u8],
) -> Error {
    let shown: Vec<String> = sources
        .iter()
        .map(|s| match s {
            Source::Const(v) if v.is_null() => "null".to_string(),
            Source::Const(v) => {
                let mut t = String::new();
                format_value(v, &mut t);
                t
            }
            Source::Field(k) => match fields[*k] {
                None => "null".to_string(),
                Some((s, e)) => String::from_utf8_lossy(&buf[s..e]).into_owned(),
            },
        })
        .collect();
    err!(
        NotNullViolation,
        "null value in column \"{}\" of relation \"{}\" violates not-null constraint",
        table.columns[j].name,
        table.name
    )
    .with_detail(format!("Failing row contains ({}).", shown.join(", ")))
}
